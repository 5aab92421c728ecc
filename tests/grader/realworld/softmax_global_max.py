# quizprep: exercise=softmax
# style: numpy-habit stable softmax with x.max()
# expect: fail diagnosis=global-max
# bug: the shift is the max over the whole tensor, so rows far below it underflow to 0/0
import torch


def stable_softmax(x, dim=-1):
    e = torch.exp(x - x.max())
    return e / e.sum(dim=dim, keepdim=True)
