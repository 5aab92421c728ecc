# quizprep: exercise=rope
# source: skyzh/tiny-llm src/tiny_llm_ref/positional_encoding.py @ 8a32b1b83df883fb7fa7feac1e09ecbbf6130ef5 (the course's reference RoPE in MLX: RoPE.__init__ precomputes float32 cos_freqs/sin_freqs for seq_len positions, inner = arange(0, half_dims) / half_dims, freqs = power(base, -inner); __call__(x, offset) picks rows by a slice or an index array, splits x into (x1, x2) as consecutive pairs when traditional else as halves, "manually doing complex number multiplication", stacks or concatenates back and casts to x's dtype)
# style: an MLX course solution: (N, S, H, D) layout, frequency tables built once up to a maximum length and indexed by position, both layouts behind one `traditional` flag, the rotation written as the real and imaginary parts of a complex product
# adapter: mx.* rewritten as torch.* op for op (mx.power → torch.pow, mx.outer → torch.outer, mx.concat → torch.cat); x transposed from (B, H, n, d) to the course's (N, S, H, D) and back; the table built for max(positions) + 1 positions and indexed with the positions tensor (the course's list-of-slices path builds the same index array); layout="interleaved" is traditional=True; a partial rotary_dim applies RoPE(dims=r) to x[..., :r] and concatenates the rest (the course asserts dims == D)
# expect: pass
from __future__ import annotations

import torch


class RoPE:
    def __init__(
        self,
        dims: int,
        seq_len: int,
        base: int = 10000,
        traditional: bool = False,
    ):
        assert dims % 2 == 0, "dims must be even"
        self.dims = dims
        self.seq_len = seq_len
        half_dims = dims // 2
        inner = torch.arange(0, half_dims, dtype=torch.float32) / half_dims
        freqs = torch.pow(base, -inner)
        t = torch.arange(seq_len)
        freqs = torch.outer(t, freqs)
        self.cos_freqs = torch.cos(freqs)
        self.sin_freqs = torch.sin(freqs)
        self.base = base
        self.half_dims = half_dims
        self.traditional = traditional

    def __call__(self, x: torch.Tensor, offset: torch.Tensor | None = None) -> torch.Tensor:
        N, S, H, D = x.shape
        cos_basis = self.cos_freqs[:S, :] if offset is None else self.cos_freqs[offset, :]
        sin_basis = self.sin_freqs[:S, :] if offset is None else self.sin_freqs[offset, :]
        # reshape x: (b, s, n_heads, head_dim // 2, 2)
        if self.traditional:
            x = x.reshape(N, S, H, self.half_dims, 2)
            x1 = x[..., 0]
            x2 = x[..., 1]
        else:
            x1 = x[..., 0 : self.half_dims]
            x2 = x[..., self.half_dims : self.dims]
        # reshape basis: (1, s, 1, dims // 2, 2)
        cos_basis = cos_basis.reshape(-1, S, 1, self.half_dims)
        sin_basis = sin_basis.reshape(-1, S, 1, self.half_dims)
        # manually doing complex number multiplication..
        real = torch.multiply(x1, cos_basis) - torch.multiply(x2, sin_basis)
        imag = torch.multiply(x2, cos_basis) + torch.multiply(x1, sin_basis)
        if self.traditional:
            y = torch.stack([real, imag], dim=-1)
            y = y.reshape(N, S, H, D)
        else:
            y = torch.cat([real, imag], dim=-1)
            y = y.reshape(N, S, H, D)
        return y.to(x.dtype)


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    r = x.shape[-1] if rotary_dim is None else rotary_dim
    rope = RoPE(r, int(positions.max()) + 1, base=base, traditional=(layout == "interleaved"))
    xs = x.transpose(1, 2)  # (B, H, n, d) -> (N, S, H, D)
    rotated = rope(xs[..., :r], offset=positions.to(torch.long))
    out = torch.cat([rotated, xs[..., r:]], dim=-1)
    return out.transpose(1, 2)
