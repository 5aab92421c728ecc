# quizprep: exercise=softmax
# Correct on the CPU, but returns its result on the CPU whatever device the input came on.
# expect: check=device diagnosis=device-hard-coded-cpu
import torch


def stable_softmax(x, dim=-1):
    exps = (x - x.amax(dim=dim, keepdim=True)).exp()
    return (exps / exps.sum(dim=dim, keepdim=True)).cpu()
