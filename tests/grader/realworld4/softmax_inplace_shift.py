# quizprep: exercise=softmax
# style: numpy habit of updating the array in place to save memory (x -= max; exp_)
# expect: fail diagnosis=input-modified-in-place
# bug: x -= x.max(...) writes into the caller's tensor (and breaks autograd on a leaf)
import torch


def stable_softmax(x, dim=-1):
    x -= x.max(dim=dim, keepdim=True).values
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)
