# quizprep: exercise=softmax
# Correct, and correct on any device: buffers from torch.*_like and x.new_*, a 0-dim CPU constant
# (which PyTorch treats as a scalar on every device), and a data-dependent branch (.item()), which
# the meta-device probe cannot run and must not fail.
import torch


def stable_softmax(x, dim=-1):
    if x.numel() == 0:
        return torch.empty_like(x)
    shifted = x - x.amax(dim=dim, keepdim=True)
    if bool(torch.isinf(x).all().item()):
        return torch.full_like(x, float("nan"))
    exps = torch.where(torch.isnan(shifted), x.new_zeros(()), shifted).exp() * torch.tensor(1.0)
    return exps / exps.sum(dim=dim, keepdim=True)
