# quizprep: exercise=softmax
# style: log-domain softmax written by hand: lse = max + log(sum(exp(x - max))), then exp(x - lse)
# expect: fail diagnosis=lse-rounded-away
# bug: max + log(sum) is formed in the input's dtype; in float16 near ±1e4 the log term rounds away
import torch


def stable_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    c = x.amax(dim=dim, keepdim=True).detach()
    lse = c + torch.log(torch.exp(x - c).sum(dim=dim, keepdim=True))
    return torch.exp(x - lse)
