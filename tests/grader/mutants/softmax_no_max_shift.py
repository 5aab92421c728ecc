# quizprep: exercise=softmax
# expect: check=large-fp32 diagnosis=no-max-shift
import torch


def stable_softmax(x, dim=-1):
    e = x.exp()  # BUG
    return e / e.sum(dim=dim, keepdim=True)
