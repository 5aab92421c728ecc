# quizprep: exercise=budget
# source: the FLOP table of Hoffmann et al. 2022 (Chinchilla, Appendix F: "Softmax: 3 × number_heads × number_of_tokens × number_of_tokens") as transcribed in public FLOP calculators; dtype sizes from torch.finfo/iinfo bits
# style: bytes from the dtype's bit width, causal pairs summed per query, the softmax's FLOPs counted with the attention matmuls
# expect: fail diagnosis=flops-softmax-counted
# bug: attention_flops adds the softmax's 3·B·H·(pairs) FLOPs on top of the two matmuls; the exercise counts only Q·Kᵀ and P·V
import torch


def _bytes(dtype):
    t = getattr(torch, dtype)
    info = torch.finfo(t) if t.is_floating_point else torch.iinfo(t)
    return info.bits // 8


def attention_scores_bytes(batch, heads, n, m, dtype):
    return batch * heads * n * m * _bytes(dtype)


def kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype):
    return 2 * layers * kv_heads * head_dim * seq_len * batch * _bytes(dtype)


def attention_params(d_model, n_heads, n_kv_heads, bias):
    d_head = d_model // n_heads
    q, kv, o = n_heads * d_head, n_kv_heads * d_head, d_model
    weights = d_model * q + 2 * d_model * kv + q * d_model
    return weights + ((q + 2 * kv + o) if bias else 0)


def attention_flops(batch, heads, n, m, head_dim, causal):
    pairs = sum(min(m, m - n + i + 1) for i in range(n)) if causal else n * m
    matmuls = 2 * 2 * batch * heads * pairs * head_dim
    softmax = 3 * batch * heads * pairs
    return matmuls + softmax
