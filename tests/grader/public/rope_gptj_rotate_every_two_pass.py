# quizprep: exercise=rope
# expect: pass
# Hugging Face transformers, src/transformers/models/gptj/modeling_gptj.py: create_sinusoidal_positions,
# rotate_every_two, apply_rotary_pos_emb (sin/cos repeat_interleave(2)), and GPTJAttention's k_rot =
# key[:, :, :, : self.rotary_dim] / k_pass on (B, n, H, d). Adapter: transposes to GPT-J's (B, n, H, d), and
# the half layout is permuted into GPT-J's consecutive pairs and back.
from __future__ import annotations

import torch


def create_sinusoidal_positions(num_pos: int, dim: int, base: float) -> torch.Tensor:
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64) / dim))
    sinusoid_inp = torch.einsum("i , j -> i j", torch.arange(num_pos, dtype=torch.int64).float(), inv_freq).float()
    return torch.cat((torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)), dim=1)


def rotate_every_two(x: torch.Tensor) -> torch.Tensor:
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)  # in einsum notation: rearrange(x, '... d j -> ... (d j)')


def apply_rotary_pos_emb(tensor: torch.Tensor, sin: torch.Tensor, cos: torch.Tensor) -> torch.Tensor:
    sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
    cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
    return (tensor * cos) + (rotate_every_two(tensor) * sin)


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    rotary_dim = x.shape[-1] if rotary_dim is None else rotary_dim
    key = x.transpose(1, 2)  # GPT-J rotates (B, n, H, d)
    embed_positions = create_sinusoidal_positions(int(positions.max()) + 1, rotary_dim, base).to(x.device)
    sincos = embed_positions[positions[None, :].expand(x.shape[0], -1)]
    sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
    k_rot = key[:, :, :, :rotary_dim]
    k_pass = key[:, :, :, rotary_dim:]
    # adapter: half pairs (i, i + r/2) moved to (2i, 2i+1), rotated, moved back
    perm = torch.stack([torch.arange(rotary_dim // 2), torch.arange(rotary_dim // 2, rotary_dim)], -1).flatten()
    perm = perm.to(x.device)
    if layout == "half":
        k_rot = k_rot[..., perm]
    k_rot = apply_rotary_pos_emb(k_rot.float(), sin, cos)
    if layout == "half":
        k_rot = k_rot[..., torch.argsort(perm)]
    return torch.cat([k_rot.to(x.dtype), k_pass], dim=-1).transpose(1, 2)
