# quizprep: exercise=softmax
# expect: check=large-fp32 diagnosis=no-max-shift
# softmax as exp(x - log Z) with log Z = log Σ exp(x) taken without the row max: a large logit makes
# Z overflow to inf, so the row comes out as zeros (not NaN, as e / Σ e would).
import torch


def stable_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    log_z = torch.log(torch.sum(torch.exp(x), dim=dim, keepdim=True))  # BUG: no max subtracted first
    return torch.exp(x - log_z)
