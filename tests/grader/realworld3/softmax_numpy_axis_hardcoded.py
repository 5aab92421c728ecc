# quizprep: exercise=softmax-numpy
# style: a blog-post softmax with the axis written as 1
# expect: fail diagnosis=hard-coded-axis
# bug: axis=1 instead of the `dim` argument
import numpy as np


def stable_softmax(x, dim=-1):
    shifted = x - np.max(x, axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=1, keepdims=True)
