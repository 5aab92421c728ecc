# quizprep: exercise=softmax-numpy
# source: a one-line slip on ddbourgin/numpy-ml numpy_ml/neural_nets/layers/layers.py (Softmax._fwd), the axis dropped from the max: np.max(X) for np.max(X, axis=self.dim, keepdims=True)
# style: a layer method on an axis attribute
# adapter: the layer's self.dim is the exercise's dim argument
# expect: fail diagnosis=global-max
# bug: the shift is the maximum of the whole array: a row whose logits all sit far below another row's maximum underflows to 0/0
import numpy as np


def stable_softmax(x, dim=-1):
    e_X = np.exp(x - np.max(x))
    return e_X / e_X.sum(axis=dim, keepdims=True)
