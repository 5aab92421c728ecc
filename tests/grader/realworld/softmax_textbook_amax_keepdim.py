# quizprep: exercise=softmax
# style: textbook stable softmax: subtract amax(dim, keepdim=True), exp, divide by the sum
# expect: pass
import torch


def stable_softmax(x, dim=-1):
    shifted = x - x.amax(dim=dim, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=dim, keepdim=True)
