"""The reference engine: attention and its parts, computed in float64 in the grader's process.

Conventions match the exercises: boolean masks with True = may attend, broadcast to the score
shape. A query row whose keys are all masked has no defined output; the reference returns NaN
there so comparisons can leave it out. The test suite cross-checks these functions against
``torch.nn.functional.scaled_dot_product_attention``.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

Params = dict[str, Tensor]


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    x = x.double()
    shifted = x - x.amax(dim=dim, keepdim=True)
    weights = shifted.exp()
    return weights / weights.sum(dim=dim, keepdim=True)


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None,
              scale: float | None = None) -> tuple[Tensor, Tensor]:
    """Returns (out, weights); rows with every key masked are NaN."""
    q, k, v = q.double(), k.double(), v.double()
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    weights = _softmax_allowing_empty_rows(scores)
    return weights @ v, weights


def _softmax_allowing_empty_rows(scores: Tensor) -> Tensor:
    row_max = scores.amax(dim=-1, keepdim=True)
    empty = torch.isneginf(row_max)
    weights = (scores - row_max.masked_fill(empty, 0.0)).exp()
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights.masked_fill(empty, float("nan"))


def gradients(output: Tensor, inputs: Sequence[Tensor], grad_output: Tensor) -> tuple[Tensor, ...]:
    """Each input's gradient of `output` weighted by `grad_output` (a vector-Jacobian product),
    taken as the gradient of sum(output * grad_output): the sum's and the product's backward hand
    `grad_output` on unchanged, so the result is autograd.grad(output, inputs, grad_output)'s bit
    for bit, without that call's check of a given output gradient, whose first run imports torch's
    symbolic shapes and sympy (a second of the grader's CPU per grade)."""
    if grad_output.shape != output.shape:
        raise ValueError(f"grad_output's shape {tuple(grad_output.shape)} is not the output's {tuple(output.shape)}")
    return torch.autograd.grad((output * grad_output.detach()).sum(), list(inputs))


def causal_mask(n: int, m: int | None = None) -> Tensor:
    """(n, m) booleans; query i sits at position m - n + i and sees keys up to that position."""
    m = n if m is None else m
    queries = torch.arange(n).unsqueeze(-1) + (m - n)
    keys = torch.arange(m).unsqueeze(0)
    return keys <= queries


def padding_mask(lengths: Tensor, max_len: int) -> Tensor:
    """(B, 1, 1, max_len) booleans, True where the key position is inside the sequence."""
    positions = torch.arange(max_len)
    return (positions < lengths.reshape(-1, 1)).reshape(-1, 1, 1, max_len)


def linear(x: Tensor, params: Params, name: str) -> Tensor:
    out = x.double() @ params[f"{name}.weight"].double().T
    bias = params.get(f"{name}.bias")
    return out if bias is None else out + bias.double()


def split_heads(x: Tensor, heads: int) -> Tensor:
    """(B, T, heads*d) -> (B, heads, T, d): head h takes features [h*d, (h+1)*d)."""
    batch, length, width = x.shape
    return x.reshape(batch, length, heads, width // heads).transpose(1, 2)


def merge_heads(x: Tensor) -> Tensor:
    batch, heads, length, d = x.shape
    return x.transpose(1, 2).reshape(batch, length, heads * d)


def multi_head_attention(query: Tensor, key: Tensor, value: Tensor, params: Params, n_heads: int,
                         mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    q = split_heads(linear(query, params, "W_q"), n_heads)
    k = split_heads(linear(key, params, "W_k"), n_heads)
    v = split_heads(linear(value, params, "W_v"), n_heads)
    heads, weights = attention(q, k, v, mask)
    return linear(merge_heads(heads), params, "W_o"), weights


def grouped_query_attention(x: Tensor, params: Params, n_heads: int, n_kv_heads: int,
                            mask: Tensor | None = None) -> Tensor:
    q = split_heads(linear(x, params, "W_q"), n_heads)
    k = split_heads(linear(x, params, "W_k"), n_kv_heads)
    v = split_heads(linear(x, params, "W_v"), n_kv_heads)
    group = n_heads // n_kv_heads
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    heads, _ = attention(q, k, v, mask)
    return linear(merge_heads(heads), params, "W_o")
