# quizprep: exercise=softmax-numpy
# source: ddbourgin/numpy-ml numpy_ml/neural_nets/layers/layers.py (Softmax._fwd: e_X = np.exp(X - np.max(X, axis=self.dim, keepdims=True)); return e_X / e_X.sum(axis=self.dim, keepdims=True))
# style: a layer method on an axis attribute, keepdims max shift
# adapter: the layer's self.dim is the exercise's dim argument
# expect: pass
import numpy as np


def stable_softmax(x, dim=-1):
    e_X = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e_X / e_X.sum(axis=dim, keepdims=True)
