# quizprep: exercise=softmax
# style: textbook stable softmax with torch.max(x, dim)
# expect: fail diagnosis=no-keepdim
# bug: the row max is taken without keepdim, so it broadcasts along the wrong axis (or fails to broadcast)
import torch


def stable_softmax(x, dim=-1):
    row_max = torch.max(x, dim=dim).values
    e = torch.exp(x - row_max)
    return e / e.sum(dim=dim, keepdim=True)
