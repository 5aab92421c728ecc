# quizprep: exercise=softmax
# Correct: x - logsumexp(x), computed in float32 for half inputs.
import torch


def stable_softmax(x, dim=-1):
    work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    return (work - torch.logsumexp(work, dim=dim, keepdim=True)).exp().to(x.dtype)
