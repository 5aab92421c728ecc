# quizprep: exercise=rope
# source: pytorch-labs/gpt-fast model.py @ 03e10bc23f31487a0353f22da7f506f0841ed720 (precompute_freqs_cis: torch.polar, then cos and sin stacked in one cache cast to the model's dtype; apply_rotary_emb on consecutive pairs; Transformer.forward's freqs_cis = self.freqs_cis[input_pos])
# style: angles in float32, the (cos, sin) cache stored in the model's dtype (bfloat16 by default), pairs rotated in float32 and cast back
# adapter: the cache built in x's dtype (gpt-fast passes the model's); x moved to (B, n, H, d) and back; the first rotary_dim features rotated; the half layout permuted into consecutive pairs and back
# expect: pass
from __future__ import annotations

import torch
from torch import Tensor


def precompute_freqs_cis(
    seq_len: int, n_elem: int, base: int = 10000,
    dtype: torch.dtype = torch.bfloat16
) -> Tensor:
    freqs = 1.0 / (base ** (torch.arange(0, n_elem, 2)[: (n_elem // 2)].float() / n_elem))
    t = torch.arange(seq_len, device=freqs.device)
    freqs = torch.outer(t, freqs)
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    cache = torch.stack([freqs_cis.real, freqs_cis.imag], dim=-1)
    return cache.to(dtype=dtype)


def apply_rotary_emb(x: Tensor, freqs_cis: Tensor) -> Tensor:
    xshaped = x.float().reshape(*x.shape[:-1], -1, 2)
    freqs_cis = freqs_cis.view(1, xshaped.size(1), 1, xshaped.size(3), 2)
    x_out2 = torch.stack(
        [
            xshaped[..., 0] * freqs_cis[..., 0] - xshaped[..., 1] * freqs_cis[..., 1],
            xshaped[..., 1] * freqs_cis[..., 0] + xshaped[..., 0] * freqs_cis[..., 1],
        ],
        -1,
    )

    x_out2 = x_out2.flatten(3)
    return x_out2.type_as(x)


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    rotary_dim = x.shape[-1] if rotary_dim is None else rotary_dim
    q = x.transpose(1, 2)  # gpt-fast rotates (bsz, seqlen, n_head, head_dim) before its transpose(1, 2)
    q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]
    perm = torch.stack([torch.arange(rotary_dim // 2), torch.arange(rotary_dim // 2, rotary_dim)], -1).flatten()
    perm = perm.to(x.device)
    if layout == "half":
        q_rot = q_rot[..., perm]
    freqs_cis = precompute_freqs_cis(int(positions.max()) + 1, rotary_dim, base, x.dtype).to(x.device)
    q_rot = apply_rotary_emb(q_rot, freqs_cis[positions])  # Transformer.forward: self.freqs_cis[input_pos]
    if layout == "half":
        q_rot = q_rot[..., torch.argsort(perm)]
    return torch.cat([q_rot, q_pass], dim=-1).transpose(1, 2)
