# quizprep: exercise=rope
# source: xiangking/ark-nlp ark_nlp/nn/layer/global_pointer_block.py and ark_nlp/nn/layer/position_embedding_block.py @ 4956c88d29b7cbd4788d7e18e7923b3f016c1a8b (GlobalPointer.forward's "RoPE编码" block: pos = SinusoidalPositionEmbedding(head_size, 'zero')(inputs), an interleaved [sin, cos] table from einsum('bn,d->bnd', position_ids, 10000 ** (-2i / d)); cos_pos = pos[..., None, 1::2].repeat(1, 1, 1, 2), sin_pos = pos[..., None, ::2].repeat(1, 1, 1, 2); qw2 = stack([-qw[..., 1::2], qw[..., ::2]], 4).reshape(qw.shape); qw = qw * cos_pos + qw2 * sin_pos)
# style: the bert4keras GlobalPointer recipe (Su Jianlin's RoPE for span extraction) ported to torch: one sinusoidal table with sin and cos interleaved, the rotated partner built by stacking (-odd, even) features, everything on (batch, seq, heads, head_size)
# adapter: x transposed from (B, H, n, d) to (B, n, H, d) and back; the caller's positions and base passed to SinusoidalPositionEmbedding (bert4keras's custom_position_ids input, which the port declares but never reads, and 10000.0 replaced by base); layout="half" permuted into consecutive pairs and back (the recipe rotates pairs (2i, 2i + 1)); a partial rotary_dim rotates x[..., :r] and concatenates the rest; the float32 result cast back to x's dtype
# expect: fail diagnosis=rope-layout-swapped
# bug: as published: cos_pos and sin_pos are built with .repeat(1, 1, 1, 2), which tiles the d/2 angles as [θ0 … θ(d/2-1), θ0 … θ(d/2-1)] instead of giving both features of pair i the angle θi, so most pairs are not rotated but mixed with two different angles; fixed in ark-nlp bdd2109 ("修复RoPE repeat步骤的bug", PR #49, issue #47) with .repeat_interleave(2, dim=-1)
from __future__ import annotations

import torch
from torch.nn import Module


class SinusoidalPositionEmbedding(Module):
    """定义Sin-Cos位置Embedding
    """
    def __init__(
        self,
        output_dim,
        merge_mode='add',
        custom_position_ids=False,
        base=10000.0,
    ):
        super(SinusoidalPositionEmbedding, self).__init__()
        self.output_dim = output_dim
        self.merge_mode = merge_mode
        self.custom_position_ids = custom_position_ids
        self.base = base

    def forward(self, inputs):
        if self.custom_position_ids:
            inputs, position_ids = inputs
            position_ids = position_ids.type(torch.float)[None]
        input_shape = inputs.shape
        _, seq_len = input_shape[0], input_shape[1]
        if not self.custom_position_ids:
            position_ids = torch.arange(seq_len).type(torch.float)[None]
        indices = torch.arange(self.output_dim // 2).type(torch.float)
        indices = torch.pow(self.base, -2 * indices / self.output_dim)
        embeddings = torch.einsum('bn,d->bnd', position_ids, indices)
        embeddings = torch.stack([torch.sin(embeddings), torch.cos(embeddings)], dim=-1)
        embeddings = torch.reshape(embeddings, (-1, seq_len, self.output_dim))

        if self.merge_mode == 'add':
            return inputs + embeddings.to(inputs.device)
        elif self.merge_mode == 'mul':
            return inputs * (embeddings + 1.0).to(inputs.device)
        elif self.merge_mode == 'zero':
            return embeddings.to(inputs.device)


def global_pointer_rope(qw, inputs, position_ids, head_size, base):
    # RoPE编码
    pos = SinusoidalPositionEmbedding(head_size, 'zero', custom_position_ids=True, base=base)((inputs, position_ids))
    cos_pos = pos[..., None, 1::2].repeat(1, 1, 1, 2)
    sin_pos = pos[..., None, ::2].repeat(1, 1, 1, 2)
    qw2 = torch.stack([-qw[..., 1::2], qw[..., ::2]], 4)
    qw2 = torch.reshape(qw2, qw.shape)
    qw = qw * cos_pos + qw2 * sin_pos
    return qw


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    r = x.shape[-1] if rotary_dim is None else rotary_dim
    xs = x.transpose(1, 2)  # (B, n, H, d)
    qw, x_pass = xs[..., :r], xs[..., r:]
    if layout == "half":
        qw = torch.stack([qw[..., : r // 2], qw[..., r // 2:]], dim=-1).reshape(qw.shape)
    qw = global_pointer_rope(qw, qw, positions, r, base)
    if layout == "half":
        qw = qw.reshape(*qw.shape[:-1], r // 2, 2)
        qw = torch.cat([qw[..., 0], qw[..., 1]], dim=-1)
    out = torch.cat([qw.to(x.dtype), x_pass], dim=-1)
    return out.transpose(1, 2)
