# quizprep: exercise=softmax
# expect: check=values diagnosis=dim-ignored
import torch


def stable_softmax(x, dim=-1):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()  # BUG
    return e / e.sum(dim=-1, keepdim=True)  # BUG
