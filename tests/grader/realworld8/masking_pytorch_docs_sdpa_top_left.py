# quizprep: exercise=masking
# source: pytorch/pytorch torch/nn/functional.py, the docstring of scaled_dot_product_attention ("efficient implementation equivalent to the following": temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)); PyTorch later added torch.nn.attention.bias.causal_lower_right because is_causal is top-left when L != S
# style: the documentation's reference code, a bool ones matrix and tril(diagonal=0); lengths → mask with arange
# adapter: causal_mask(n, m) is the docs' temp_mask with L = n, S = m; padding_mask broadcast over (B, 1, 1, max_len) as the exercise asks
# expect: fail diagnosis=causal-no-offset
# bug: tril(diagonal=0) on (n, m) aligns the diagonal top-left: with m > n (a KV cache) query i sees keys 0..i instead of 0..i + m − n
import torch


def causal_mask(n, m=None):
    L, S = n, n if m is None else m
    return torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)


def padding_mask(lengths, max_len):
    keep = torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]
    return keep[:, None, None, :]
