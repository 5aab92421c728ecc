# quizprep: exercise=rope
# expect: pass
# Hugging Face transformers, src/transformers/models/llama/modeling_llama.py: LlamaRotaryEmbedding.forward
# (float32 inv_freq @ position_ids, emb = cat(freqs, freqs), cos/sin cast to x.dtype), rotate_half and
# apply_rotary_pos_emb; partial rotary as models/phi/modeling_phi.py (query_rot, query_pass). Adapter: the
# interleaved layout is permuted into rotate_half's and back, as convert_llama_weights_to_hf.py permutes W_q.
from __future__ import annotations

import torch


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rotary_cos_sin(x, position_ids, dim, base):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(device=x.device, dtype=torch.float) / dim))
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].float()
    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


def apply_rotary_pos_emb(q, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin)


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    rotary_dim = x.shape[-1] if rotary_dim is None else rotary_dim
    x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
    # adapter: interleaved pairs (2i, 2i+1) moved to (i, i + r/2), rotated, moved back
    perm = torch.cat([torch.arange(0, rotary_dim, 2), torch.arange(1, rotary_dim, 2)]).to(x.device)
    if layout == "interleaved":
        x_rot = x_rot[..., perm]
    cos, sin = rotary_cos_sin(x, positions[None, :], rotary_dim, base)
    x_rot = apply_rotary_pos_emb(x_rot, cos, sin)
    if layout == "interleaved":
        x_rot = x_rot[..., torch.argsort(perm)]
    return torch.cat((x_rot, x_pass), dim=-1)
