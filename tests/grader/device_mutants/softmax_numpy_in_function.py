# quizprep: exercise=softmax
# Correct on the CPU, but computes through NumPy: .numpy() raises for a tensor on a GPU.
# expect: check=device diagnosis=device-numpy
import numpy as np
import torch


def stable_softmax(x, dim=-1):
    values = x.numpy()
    exps = np.exp(values - values.max(axis=dim, keepdims=True))
    return torch.from_numpy(exps / exps.sum(axis=dim, keepdims=True))
