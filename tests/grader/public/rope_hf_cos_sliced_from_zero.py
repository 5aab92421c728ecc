# quizprep: exercise=rope
# expect: fail diagnosis=rope-offset-ignored
# Hugging Face transformers' early LLaMA port (v4.28, modeling_llama.py): LlamaRotaryEmbedding.forward returns
# cos_cached[:, :, :seq_len] and the caller rotates with them directly: the cache's first seq_len rows, so a
# decode step after T tokens is rotated as position 0 (position_ids came later). Adapter: seq_len is the number
# of tokens given; the interleaved layout is permuted into rotate_half's and back.
from __future__ import annotations

import torch


class LlamaRotaryEmbedding(torch.nn.Module):
    def __init__(self, dim, max_position_embeddings=2048, base=10000, device=None):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float().to(device) / dim))
        self.register_buffer("inv_freq", inv_freq)
        self.max_seq_len_cached = max_position_embeddings
        t = torch.arange(self.max_seq_len_cached, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos()[None, None, :, :], persistent=False)
        self.register_buffer("sin_cached", emb.sin()[None, None, :, :], persistent=False)

    def forward(self, x, seq_len=None):
        return (self.cos_cached[:, :, :seq_len, ...].to(dtype=x.dtype),
                self.sin_cached[:, :, :seq_len, ...].to(dtype=x.dtype))


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    rotary_dim = x.shape[-1] if rotary_dim is None else rotary_dim
    x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
    perm = torch.cat([torch.arange(0, rotary_dim, 2), torch.arange(1, rotary_dim, 2)]).to(x.device)
    if layout == "interleaved":
        x_rot = x_rot[..., perm]
    rotary = LlamaRotaryEmbedding(rotary_dim, int(positions.max()) + 1, base, x.device)
    cos, sin = rotary(x, seq_len=x.shape[-2])
    x_rot = (x_rot.float() * cos.float()) + (rotate_half(x_rot.float()) * sin.float())
    if layout == "interleaved":
        x_rot = x_rot[..., torch.argsort(perm)]
    return torch.cat((x_rot.to(x.dtype), x_pass), dim=-1)
