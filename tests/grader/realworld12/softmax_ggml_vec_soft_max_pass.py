# quizprep: exercise=softmax
# source: ggml-org/ggml src/ggml-cpu/ops.cpp and src/ggml-cpu/vec.cpp @ d99724f2b141fed9e1a9f402213506c081433465 (ggml_compute_forward_soft_max_f32: per row, copy the row into a float work buffer, scale it, add an optional mask, find the row max with ggml_vec_max_f32, then ggml_vec_soft_max_f32 writes expf(x[i] - max) and returns their sum accumulated in ggml_float (double); the row is scaled by (float)(1.0/sum))
# style: a C reference kernel: one row at a time in float, the sum of exponentials carried in double, normalisation as a multiply by the reciprocal, no autograd
# adapter: C loops over rows written as tensor ops over the last axis; `dim` moved to the last axis and back; scale 1.0, no mask, no ALiBi slope, no sinks (the branches the op takes for a plain softmax); ggml's float work buffer is float32 for half inputs and float64 for float64 inputs (ggml itself is f32-only); the double accumulator is float64
# expect: pass
from __future__ import annotations

import torch


def ggml_vec_max_f32(x: torch.Tensor) -> torch.Tensor:
    # max = -INFINITY; for i: max = MAX(max, x[i])
    return x.amax(dim=-1, keepdim=True)


def ggml_vec_soft_max_f32(x: torch.Tensor, max: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # y[i] = expf(x[i] - max); sum += (ggml_float) y[i]
    y = torch.exp(x - max)
    sum = y.to(torch.float64).sum(dim=-1, keepdim=True)
    return y, sum


def ggml_compute_forward_soft_max_f32(src0: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    wp = src0.clone()              # ggml_vec_cpy_f32(ne00, wp, sp)
    wp = wp * scale                # ggml_vec_scale_f32(ne00, wp, scale)
    max = ggml_vec_max_f32(wp)
    dp, sum = ggml_vec_soft_max_f32(wp, max)
    sum = 1.0 / sum
    dp = dp * sum.to(dp.dtype)     # ggml_vec_scale_f32(ne00, dp, sum)
    return dp


def stable_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    sp = x.movedim(dim, -1).to(work)
    dp = ggml_compute_forward_soft_max_f32(sp)
    return dp.movedim(-1, dim).to(x.dtype)
