# quizprep: exercise=softmax
# style: a tutorial softmax with the reduction axis fixed to 1
# expect: fail diagnosis=hard-coded-axis
# bug: reduces over dim=1 whatever `dim` says
import torch


def stable_softmax(x, dim=-1):
    shifted = x - x.amax(dim=1, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=1, keepdim=True)
