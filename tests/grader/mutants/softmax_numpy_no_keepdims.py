# quizprep: exercise=softmax-numpy
# expect: check=values diagnosis=no-keepdim
# Reductions without keepdims broadcast along the wrong axis.
from __future__ import annotations

import numpy as np


def stable_softmax(x: np.ndarray, dim: int = -1) -> np.ndarray:
    shifted = x - x.max(axis=dim)  # BUG
    exps = np.exp(shifted)
    return exps / exps.sum(axis=dim)  # BUG
