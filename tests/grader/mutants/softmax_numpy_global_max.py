# quizprep: exercise=softmax-numpy
# expect: check=large-fp32 diagnosis=global-max
# One maximum for the whole array.
from __future__ import annotations

import numpy as np


def stable_softmax(x: np.ndarray, dim: int = -1) -> np.ndarray:
    shifted = x - x.max()  # BUG
    exps = np.exp(shifted)
    return exps / exps.sum(axis=dim, keepdims=True)
