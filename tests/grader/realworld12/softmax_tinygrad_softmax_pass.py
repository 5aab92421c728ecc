# quizprep: exercise=softmax
# source: tinygrad/tinygrad tinygrad/tensor.py @ ea74856d99f3b30e17e4bec82200a3536052088f (Tensor._softmax(axis): m = self - self.max(axis=axis, keepdim=True); e = m.exp(); returns m, e, e.sum(axis=axis, keepdim=True); Tensor.softmax(axis=-1) = e.div(ss))
# style: a tiny autograd library: one private helper returning (shifted, exp, sum) shared by softmax and log_softmax, the max not detached, everything in the tensor's dtype
# adapter: Tensor methods written as torch methods (max(axis, keepdim) → amax(dim, keepdim=True)); `dim` passed as tinygrad's `axis`
# expect: pass
from __future__ import annotations

import torch


def _softmax(self: torch.Tensor, axis: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    m = self - self.amax(dim=axis, keepdim=True)
    e = m.exp()
    return m, e, e.sum(dim=axis, keepdim=True)


def softmax(self: torch.Tensor, axis: int = -1) -> torch.Tensor:
    _, e, ss = _softmax(self, axis)
    return e.div(ss)


def stable_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return softmax(x, axis=dim)
