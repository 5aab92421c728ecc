# quizprep: exercise=softmax
# expect: check=large-fp32 diagnosis=global-max
import torch


def stable_softmax(x, dim=-1):
    e = (x - x.max()).exp()  # BUG
    return e / e.sum(dim=dim, keepdim=True)
