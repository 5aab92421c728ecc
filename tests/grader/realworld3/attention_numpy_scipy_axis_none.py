# quizprep: exercise=attention-numpy
# style: SciPy's softmax, called without an axis
# expect: fail diagnosis=softmax-all-axes
# bug: scipy.special.softmax normalises over every element when axis is left at None
import numpy as np
from scipy.special import softmax


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return np.matmul(weights, v).astype(q.dtype), weights.astype(q.dtype)
