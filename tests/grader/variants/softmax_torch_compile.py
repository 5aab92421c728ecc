# quizprep: exercise=softmax
# Correct: decorated with @torch.compile, which the grader runs eagerly, as written.
import torch


@torch.compile
def stable_softmax(x, dim=-1):
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)
