# quizprep: exercise=rope
# source: google/flax examples/gemma/positional_embeddings.py @ f3c115183d9f82db3afefaddc7ab9743cbf2f667 (apply_rope: fraction = 2 * arange(head_dim // 2) / head_dim, timescale = max_wavelength ** fraction, sinusoid_inp = positions / timescale, the halves split and rotated, the result cast back with astype)
# style: a JAX port: positions divided by timescales instead of multiplied by inverse frequencies, halves split and rotated by hand in float32
# adapter: jax.numpy spelled in torch (jnp.split -> torch.split, concatenate -> cat); renamed gemma_apply_rope; x moved to Gemma's [B, L, N, H] and back; positions broadcast to [B, L]; base passed as max_wavelength; the first rotary_dim features rotated; the interleaved layout permuted into halves and back
# expect: pass
from __future__ import annotations

import torch

_MAX_WAVELENGTH = 10_000


def gemma_apply_rope(
    inputs: torch.Tensor,  # [B, L, N, H]
    positions: torch.Tensor,  # [B, L]
    head_dim: int,
    max_wavelength: float = _MAX_WAVELENGTH,
) -> torch.Tensor:
    """Applies RoPE."""
    fraction = 2 * torch.arange(0, head_dim // 2, device=inputs.device) / head_dim
    timescale = max_wavelength**fraction

    sinusoid_inp = (
        positions[..., None] / timescale[None, None, :]
    )
    sinusoid_inp = sinusoid_inp[..., None, :]
    sin = torch.sin(sinusoid_inp)
    cos = torch.cos(sinusoid_inp)

    first_half, second_half = torch.split(inputs, inputs.shape[-1] // 2, dim=-1)
    first_part = first_half * cos - second_half * sin
    second_part = second_half * cos + first_half * sin
    out = torch.cat([first_part, second_part], dim=-1)
    return out.to(inputs.dtype)


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    rotary_dim = x.shape[-1] if rotary_dim is None else rotary_dim
    inputs = x.transpose(1, 2)  # Gemma's [B, L, N, H]
    x_rot, x_pass = inputs[..., :rotary_dim], inputs[..., rotary_dim:]
    # adapter: interleaved pairs (2i, 2i+1) moved to (i, i + r/2), rotated, moved back
    perm = torch.cat([torch.arange(0, rotary_dim, 2), torch.arange(1, rotary_dim, 2)]).to(x.device)
    if layout == "interleaved":
        x_rot = x_rot[..., perm]
    batch_positions = positions[None, :].expand(x.shape[0], -1)
    x_rot = gemma_apply_rope(x_rot, batch_positions, rotary_dim, max_wavelength=base)
    if layout == "interleaved":
        x_rot = x_rot[..., torch.argsort(perm)]
    return torch.cat([x_rot, x_pass], dim=-1).transpose(1, 2)
