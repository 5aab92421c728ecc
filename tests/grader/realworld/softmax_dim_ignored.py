# quizprep: exercise=softmax
# style: last-axis softmax written for attention rows
# expect: fail diagnosis=dim-ignored
# bug: the reductions use the last axis whatever `dim` says
import torch


def stable_softmax(x, dim=-1):
    m = x.max(dim=-1, keepdim=True).values
    e = torch.exp(x - m)
    return e / e.sum(dim=-1, keepdim=True)
