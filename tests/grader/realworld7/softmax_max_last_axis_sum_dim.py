# quizprep: exercise=softmax
# source: the "safe softmax" helper of many model zoos (e.g. tinygrad-style `x - x.max(-1, keepdim=True)`), made dim-aware on the sum only
# style: subtract the max, exp, divide by the sum; keepdim everywhere
# expect: fail diagnosis=max-over-last-axis
# bug: the max is taken over the last axis whatever `dim` is, while the sum is over `dim`: when dim is not the last axis that shift varies along `dim` and does not cancel, so the result is not a softmax (and large logits can overflow)
import torch


def stable_softmax(x, dim=-1):
    shifted = x - x.amax(dim=-1, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=dim, keepdim=True)
