# quizprep: exercise=softmax
# expect: check=values diagnosis=no-keepdim
import torch


def stable_softmax(x, dim=-1):
    e = (x - x.amax(dim=dim)).exp()  # BUG
    return e / e.sum(dim=dim)  # BUG
