# quizprep: exercise=softmax
# expect: check=values diagnosis=max-over-last-axis
# The max is taken over the last axis, the sum over dim.
import torch


def stable_softmax(x, dim=-1):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()  # BUG
    return e / e.sum(dim=dim, keepdim=True)
