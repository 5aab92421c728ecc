# quizprep: exercise=softmax
# source: tracel-ai/burn burn-tensor/src/tensor/activation/base.rs @ 8bbfbd8a8ff9d418dc4eaf0a77efda572175834a (PR #346 "perf: softmax": softmax(tensor, dim) = tensor - tensor.detach().max_dim(dim), exp, divided by its sum_dim(dim))
# style: a Rust tensor library's generic activation: reductions keep their dimension (max_dim, sum_dim), the max detached from the graph, computed in the tensor's own element type
# adapter: Rust ported op for op (max_dim → amax(dim, keepdim=True), detach → detach(), sum_dim → sum(dim, keepdim=True), div → /); the computation stays in x's dtype as burn's does for every backend element type
# expect: pass
from __future__ import annotations

import torch


def softmax(tensor: torch.Tensor, dim: int) -> torch.Tensor:
    tensor = tensor.clone() - tensor.detach().amax(dim=dim, keepdim=True)
    tensor = tensor.exp()
    tensor_tmp = tensor.clone().sum(dim=dim, keepdim=True)

    return tensor.div(tensor_tmp)


def stable_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return softmax(x, dim)
