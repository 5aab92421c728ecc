# quizprep: exercise=rope
# source: ml-explore/mlx python/mlx/nn/layers/positional_encoding.py @ 874b739f3cd3ff141d8cb8d8f0751d98475e65d9 (nn.RoPE before the fused kernel: __call__ reshapes x to (-1, L, D) and calls create_cos_sin_theta(N, dims, offset, base, scale, dtype=x.dtype), which builds positions = arange(offset, N, dtype=dtype) * scale and freqs = exp(-arange(0, D/2, dtype=dtype) * log(base) / (D/2)); _compute_rope rotates halves (x[:dims/2], x[dims/2:dims]) and passes x[dims:] through, _compute_traditional_rope rotates (x[::2], x[1::2]) and concatenates [rx1[..., None], rx2[..., None]])
# style: MLX's layer in pure array code: the angle built as exp(-i · log(base) / (D/2)) rather than a power, costheta/sintheta computed for the call, a `traditional` flag choosing consecutive pairs over halves, the input flattened to 3-D and reshaped back
# adapter: mx.* rewritten as torch.* op for op (mx.concatenate → torch.cat, mx.reshape → reshape); the class-level (N, D, offset, base, scale, dtype) cache left out (its key is an offset, not a positions tensor); arange(offset, N, dtype=dtype) replaced by the caller's positions converted the same way, positions.to(dtype); layout="interleaved" is traditional=True; with a partial rotary_dim the traditional path gets x[..., :r] and the rest is concatenated here (MLX raises NotImplementedError for partial traditional RoPE); arange given device=positions.device (added after the first grading: MLX has one memory, so the port had left it out, a second bug of the port's making)
# expect: fail diagnosis=rope-angles-low-precision
# bug: as published: create_cos_sin_theta is called with dtype=x.dtype, so for bfloat16/float16 inputs the positions, the frequencies and their product are all rounded to the half dtype (position 30000 is not even representable in bfloat16); removed when nn.RoPE moved to the fused mx.fast.rope kernel (ml-explore/mlx ccf16459955fd8bb382df94a7f0b2cd379c5431b, PR #676), which computes the angles in float32
from __future__ import annotations

import math

import torch


class RoPE:
    """Implements the rotary positional encoding.

    The traditional implementation rotates consecutive pairs of elements in the
    feature dimension while the default implementation rotates pairs with
    stride half the feature dimensions for efficiency.
    """

    def __init__(
        self,
        dims: int,
        traditional: bool = False,
        base: float = 10000,
        scale: float = 1.0,
    ):
        super().__init__()
        self.dims = dims
        self.traditional = traditional
        self.base = base
        self.scale = scale

    def _compute_rope(self, costheta, sintheta, x):
        x1 = x[..., : self.dims // 2]
        x2 = x[..., self.dims // 2 : self.dims]
        rx1 = x1 * costheta - x2 * sintheta
        rx2 = x1 * sintheta + x2 * costheta

        if self.dims < x.shape[-1]:
            rx = torch.cat([rx1, rx2, x[..., self.dims :]], dim=-1)
        else:
            rx = torch.cat([rx1, rx2], dim=-1)

        return rx

    def _compute_traditional_rope(self, costheta, sintheta, x):
        x1 = x[..., ::2]
        x2 = x[..., 1::2]
        rx1 = x1 * costheta - x2 * sintheta
        rx2 = x1 * sintheta + x2 * costheta

        if self.dims < x.shape[-1]:
            raise NotImplementedError(
                "RoPE doesn't implement partial traditional application"
            )

        rx = torch.cat([rx1[..., None], rx2[..., None]], dim=-1)

        return rx

    def __call__(self, x, positions):
        shape = x.shape
        x = torch.reshape(x, (-1, shape[-2], shape[-1]))
        costheta, sintheta = RoPE.create_cos_sin_theta(
            positions, self.dims, base=self.base, scale=self.scale, dtype=x.dtype
        )

        rope = (
            self._compute_traditional_rope if self.traditional else self._compute_rope
        )
        rx = rope(costheta, sintheta, x)

        return torch.reshape(rx, shape)

    @classmethod
    def create_cos_sin_theta(
        cls,
        positions,
        D: int,
        base: float = 10000,
        scale: float = 1.0,
        dtype=torch.float32,
    ):
        half_D = D // 2
        positions = positions.to(dtype) * scale
        freqs = torch.exp(-torch.arange(0.0, half_D, dtype=dtype, device=positions.device) * (math.log(base) / half_D))
        theta = torch.reshape(positions, (-1, 1)) * torch.reshape(freqs, (1, -1))
        return (torch.cos(theta), torch.sin(theta))


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    r = x.shape[-1] if rotary_dim is None else rotary_dim
    rope = RoPE(r, traditional=(layout == "interleaved"), base=base)
    if layout == "interleaved" and r < x.shape[-1]:
        return torch.cat([rope(x[..., :r], positions), x[..., r:]], dim=-1)
    return rope(x, positions)
