# quizprep: exercise=softmax-numpy
# expect: check=large-fp32 diagnosis=no-max-shift
# No shift.
from __future__ import annotations

import numpy as np


def stable_softmax(x: np.ndarray, dim: int = -1) -> np.ndarray:
    shifted = x
    exps = np.exp(shifted)  # BUG
    return exps / exps.sum(axis=dim, keepdims=True)
