# quizprep: exercise=softmax
# style: log-domain softmax by hand, subtracting the max before the log-sum term; a helper for the reduction
# expect: pass
import torch


def _log_normaliser(shifted: torch.Tensor, dim: int) -> torch.Tensor:
    return shifted.exp().sum(dim=dim, keepdim=True).log()


def stable_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted = x - x.amax(dim=dim, keepdim=True)
    return (shifted - _log_normaliser(shifted, dim)).exp()
