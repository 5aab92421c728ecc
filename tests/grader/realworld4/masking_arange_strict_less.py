# quizprep: exercise=masking
# style: position arithmetic with arange and broadcasting comparisons, offset for the KV cache
# expect: fail diagnosis=causal-no-diagonal
# bug: key_pos < query_pos (strict) drops the diagonal: a token cannot attend to itself
import torch


def causal_mask(n: int, m: int | None = None) -> torch.Tensor:
    m = n if m is None else m
    query_pos = torch.arange(m - n, m)[:, None]
    key_pos = torch.arange(m)[None, :]
    return key_pos < query_pos


def padding_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    positions = torch.arange(max_len, device=lengths.device)
    return (positions[None, :] < lengths[:, None])[:, None, None, :]
