# quizprep: exercise=softmax
# source: tracel-ai/burn burn-tensor/src/tensor/activation/base.rs @ 747e245cc495c45ac3a69d1d96847e4cd2170050 (before PR #346: softmax(tensor, dim) = log_softmax(tensor, dim).exp(); log_softmax = tensor - log(sum_dim(exp(tensor))), the sum taken in full precision when the element type is half)
# style: softmax derived from log-softmax, half-precision inputs promoted to full precision for the log-sum-exp only, reductions that keep their dimension
# adapter: Rust ported op for op (Precision::Half → float16/bfloat16, to_full_precision → .float(), from_full_precision → .to(dtype), sum_dim → sum(dim, keepdim=True))
# bug: as published: no max shift anywhere, so exp(tensor) overflows for logits above ~88 in float32 (~11 in float16 before the upcast) and the row becomes 0 (or NaN); fixed in 8bbfbd8a8ff9d418dc4eaf0a77efda572175834a (PR #346), which subtracts tensor.detach().max_dim(dim) first
# expect: fail diagnosis=no-max-shift
from __future__ import annotations

import torch


def log_softmax(tensor: torch.Tensor, dim: int) -> torch.Tensor:
    if tensor.dtype in (torch.float16, torch.bfloat16):  # Precision::Half
        tensor_full = tensor.float()
        tensor_tmp = tensor_full.exp().sum(dim=dim, keepdim=True).log()
        tensor_tmp = tensor_tmp.to(tensor.dtype)
    else:
        tensor_tmp = tensor.clone().exp().sum(dim=dim, keepdim=True).log()

    return tensor.sub(tensor_tmp)


def softmax(tensor: torch.Tensor, dim: int) -> torch.Tensor:
    return log_softmax(tensor, dim).exp()


def stable_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return softmax(x, dim)
