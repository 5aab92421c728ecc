# quizprep: exercise=gqa
# source: onnx/onnx onnx/reference/ops/op_attention.py @ 335daa9b9f258b8be806283b59f8c3315273afcf (_compute_attention: scale = np.sqrt(1 / np.sqrt(head_size)) on Q and on K; a boolean attn_mask turned into -inf with np.ma.array(attn_bias, mask=np.logical_not(attn_mask)).filled(-inf); GQA: reps = [1, q_num_heads // kv_num_heads, 1, 1]; K = np.tile(K, reps); V = np.tile(V, reps); _softmax with the row max)
# style: ONNX's NumPy reference operator ported op for op: the scale split as √scale on Q and on K, a zero bias filled with -inf where the mask is False, KV heads expanded with np.tile (torch's Tensor.repeat), the output cast to Q's dtype
# adapter: np.* rewritten as torch.* one for one (np.tile → Tensor.repeat, the masked-array fill → masked_fill, which broadcasts the (T, T) or (B, 1, 1, T) masks); heads split by the module itself (view + transpose) and the operator called with 4-D Q, K, V, so the 3-D reshape path is not used; projections W_q, W_k, W_v, W_o as nn.Linear without bias
# expect: fail diagnosis=gqa-repeat
# bug: as published: np.tile lays the KV heads out as (0, 1, …, G−1, 0, 1, …), so query head h reads KV head h mod G instead of h // (H / G); onnx/onnx PR #7274 "Update attention gqa to use repeat interleave within repeat kv" (later versions use np.repeat(K, seq_reps, axis=1))
from __future__ import annotations

import math

import torch
from torch import nn


def _softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    x_max = torch.amax(x, dim=axis, keepdim=True)
    tmp = torch.exp(x - x_max)
    s = torch.sum(tmp, dim=axis, keepdim=True)
    return tmp / s


def _compute_attention(Q, K, V, attn_mask=None, q_num_heads=None, kv_num_heads=None):
    q_head_size = Q.shape[3]
    scale = 1 / math.sqrt(q_head_size)
    scale = math.sqrt(scale)

    q_sequence_length = Q.shape[2]
    kv_sequence_length = K.shape[2]
    attn_bias = torch.zeros((q_sequence_length, kv_sequence_length), dtype=Q.dtype, device=Q.device)
    if attn_mask is not None:
        attn_bias = attn_bias.masked_fill(torch.logical_not(attn_mask), float("-inf"))

    if q_num_heads is None:
        q_num_heads = Q.shape[1]
    if kv_num_heads is None:
        k_num_heads = K.shape[1]
        v_num_heads = K.shape[1]
    else:
        k_num_heads = kv_num_heads
        v_num_heads = kv_num_heads
    if (
        (q_num_heads != k_num_heads)
        and (q_num_heads % k_num_heads == 0)
        and (k_num_heads == v_num_heads)
    ):
        seq_reps = int(q_num_heads / k_num_heads)
        reps = [1, seq_reps, 1, 1]
        K = K.repeat(reps)
        V = V.repeat(reps)

    k_transpose = K.permute(0, 1, 3, 2)
    qk_matmul_output = torch.matmul(Q * scale, k_transpose * scale)
    qk_with_bias = qk_matmul_output + attn_bias
    qk_softmax = _softmax(qk_with_bias)
    output = torch.matmul(qk_softmax, V).to(Q.dtype)
    return output


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.d_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.d_head, bias=False)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d_head, bias=False)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d_head, bias=False)
        self.W_o = nn.Linear(n_heads * self.d_head, d_model, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        B, T, _ = x.shape
        Q = self.W_q(x).view(B, T, self.n_heads, self.d_head).transpose(1, 2)
        K = self.W_k(x).view(B, T, self.n_kv_heads, self.d_head).transpose(1, 2)
        V = self.W_v(x).view(B, T, self.n_kv_heads, self.d_head).transpose(1, 2)
        out = _compute_attention(Q, K, V, attn_mask=mask, q_num_heads=self.n_heads,
                                 kv_num_heads=self.n_kv_heads)
        out = out.transpose(1, 2).reshape(B, T, self.n_heads * self.d_head)
        return self.W_o(out)
