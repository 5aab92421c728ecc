# quizprep: exercise=softmax-numpy
# source: a one-line slip on scipy/scipy scipy/special/_logsumexp.py @ 033b13880993f49e485f8ba763fbb3847ff4b801 (softmax(x, axis=None): x_max = np.amax(x, axis=axis, keepdims=True); exp_x_shifted = np.exp(x - x_max); return exp_x_shifted / np.sum(exp_x_shifted, axis=axis, keepdims=True))
# style: SciPy's special.softmax: np.amax with keepdims, the shifted exponentials named and divided by their keepdims sum, all in the input's dtype
# adapter: axis = dim (SciPy's default axis=None, the whole array, is never used); _asarray_validated(x, check_finite=False) dropped, since x is already an ndarray
# expect: fail diagnosis=no-keepdim
# bug: a slip of ours: keepdims dropped from np.amax, so the (reduced) maxima broadcast against the wrong axis: each row is shifted by other rows' maxima (or the shapes do not broadcast at all)
from __future__ import annotations

import numpy as np


def softmax(x, axis=None):
    x_max = np.amax(x, axis=axis)
    exp_x_shifted = np.exp(x - x_max)
    return exp_x_shifted / np.sum(exp_x_shifted, axis=axis, keepdims=True)


def stable_softmax(x: np.ndarray, dim: int = -1) -> np.ndarray:
    return softmax(x, axis=dim)
