# quizprep: exercise=softmax
# style: picoGPT's softmax translated to torch, with the axis honoured and a float32 detour for halves
# expect: pass
import torch


def stable_softmax(x, dim=-1):
    work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    exp_x = torch.exp(work - torch.max(work, dim=dim, keepdim=True).values)
    return (exp_x / torch.sum(exp_x, dim=dim, keepdim=True)).to(x.dtype)
