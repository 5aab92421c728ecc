# quizprep: exercise=softmax
# Moves its input to the GPU whatever device it came on.
# expect: check=device diagnosis=device-hard-coded-cuda
import torch


def stable_softmax(x, dim=-1):
    x = x.cuda()
    exps = (x - x.amax(dim=dim, keepdim=True)).exp()
    return exps / exps.sum(dim=dim, keepdim=True)
