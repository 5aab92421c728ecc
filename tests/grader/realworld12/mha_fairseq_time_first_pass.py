# quizprep: exercise=mha
# source: facebookresearch/fairseq fairseq/modules/multihead_attention.py and fairseq/utils.py @ 3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99 (MultiheadAttention.forward: q = q_proj(query) * scaling, heads by .view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1), attn_weights = bmm(q, k.transpose(1, 2)) + attn_mask, softmax in float32, bmm with v, transpose back and out_proj; the weights averaged over heads unless need_head_weights=True)
# style: fairseq's time-first (T, B, C) layout: heads folded into the batch as (B*H, T, d_head) with view + transpose(0, 1), q scaled by head_dim**-0.5 in place before the bmm, an additive float attn_mask added to the (B*H, n, m) scores, utils.softmax in float32 then type_as, the weights returned (H, B, n, m) and averaged over heads unless need_head_weights
# adapter: the plain self/cross-attention path of MultiheadAttention.forward (no incremental_state, bias_k/bias_v, add_zero_attn, key_padding_mask, xformers or beam reduction; dropout p = 0); query/key/value transposed from (B, T, C) to fairseq's (T, B, C) and the output back; the boolean mask broadcast to (B, H, n, m) and turned into fairseq's additive form (0 / -inf) reshaped to (B*H, n, m) (fairseq's own attn_mask is a (n, m) matrix it unsqueezes over B*H); the contract's W_q, W_k, W_v, W_o are fairseq's q_proj, k_proj, v_proj, out_proj; the head weights transposed from (H, B, n, m) to (B, H, n, m) and fairseq's float32 weights cast to the input dtype
# expect: pass
from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def softmax(x, dim: int, onnx_trace: bool = False):
    # fairseq/utils.py
    if onnx_trace:
        return F.softmax(x.float(), dim=dim)
    else:
        return F.softmax(x, dim=dim, dtype=torch.float32)


class MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, bias=True):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        assert self.head_dim * num_heads == self.embed_dim, "embed_dim must be divisible by num_heads"
        self.scaling = self.head_dim**-0.5
        self.onnx_trace = False

        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(
        self,
        query: Tensor,
        key: Optional[Tensor],
        value: Optional[Tensor],
        key_padding_mask: Optional[Tensor] = None,
        need_weights: bool = True,
        attn_mask: Optional[Tensor] = None,
        need_head_weights: bool = False,
    ):
        if need_head_weights:
            need_weights = True

        tgt_len, bsz, embed_dim = query.size()
        src_len = tgt_len
        if key is not None:
            src_len, key_bsz, _ = key.size()

        q = self.q_proj(query)
        k = self.k_proj(key)
        v = self.v_proj(value)
        q *= self.scaling

        q = (
            q.contiguous()
            .view(tgt_len, bsz * self.num_heads, self.head_dim)
            .transpose(0, 1)
        )
        kv_bsz = bsz  # need default value for scripting
        if k is not None:
            kv_bsz = k.size(1)
            k = (
                k.contiguous()
                .view(-1, kv_bsz * self.num_heads, self.head_dim)
                .transpose(0, 1)
            )
        if v is not None:
            v = (
                v.contiguous()
                .view(-1, kv_bsz * self.num_heads, self.head_dim)
                .transpose(0, 1)
            )

        assert k is not None
        assert k.size(1) == src_len

        attn_weights = torch.bmm(q, k.transpose(1, 2))

        assert list(attn_weights.size()) == [bsz * self.num_heads, tgt_len, src_len]

        if attn_mask is not None:
            attn_weights += attn_mask

        attn_weights_float = softmax(
            attn_weights, dim=-1, onnx_trace=self.onnx_trace
        )
        attn_weights = attn_weights_float.type_as(attn_weights)
        attn_probs = attn_weights

        assert v is not None
        attn = torch.bmm(attn_probs, v)
        assert list(attn.size()) == [bsz * self.num_heads, tgt_len, self.head_dim]
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, self.embed_dim)
        attn = self.out_proj(attn)
        attn_weights: Optional[Tensor] = None
        if need_weights:
            attn_weights = attn_weights_float.view(
                bsz, self.num_heads, tgt_len, src_len
            ).transpose(1, 0)
            if not need_head_weights:
                # average attention weights over heads
                attn_weights = attn_weights.mean(dim=0)

        return attn, attn_weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.mha = MultiheadAttention(d_model, n_heads)
        # the contract's names for fairseq's projections
        self.W_q = self.mha.q_proj
        self.W_k = self.mha.k_proj
        self.W_v = self.mha.v_proj
        self.W_o = self.mha.out_proj

    def forward(self, query, key, value, mask=None):
        B, n, _ = query.shape
        m = key.shape[1]
        attn_mask = None
        if mask is not None:
            full = mask.expand(B, self.n_heads, n, m)
            attn_mask = torch.zeros(full.shape, dtype=query.dtype, device=query.device).masked_fill(
                ~full, float("-inf")).reshape(B * self.n_heads, n, m)
        attn, attn_weights = self.mha(
            query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1),
            attn_mask=attn_mask, need_head_weights=True)
        # fairseq's head weights are (num_heads, bsz, tgt, src): back to (bsz, num_heads, tgt, src)
        if attn_weights.dim() == 4:
            attn_weights = attn_weights.transpose(0, 1)
        return attn.transpose(0, 1), attn_weights.to(query.dtype)
