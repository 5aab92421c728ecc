# quizprep: exercise=softmax
# style: production-like: half inputs upcast to float32, exp(x - logsumexp(x)), cast back to the input dtype
# expect: pass
import torch


def stable_softmax(x, dim=-1):
    work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    out = torch.exp(work - torch.logsumexp(work, dim=dim, keepdim=True))
    return out.to(x.dtype)
