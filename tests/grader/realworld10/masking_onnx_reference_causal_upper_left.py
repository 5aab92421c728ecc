# quizprep: exercise=masking
# source: onnx/onnx onnx/reference/ops/op_attention.py @ 335daa9b9f258b8be806283b59f8c3315273afcf (_compute_attention, is_causal: temp_mask = np.tril(np.ones((q_sequence_length, kv_sequence_length), dtype=bool), k=0), "the attention masking has the form of the upper left causal bias ... when the mask is a non-square matrix"); padding from the same file @ 04138e07da14f1eb60f5619f038e044eec365c1e (nonpad_kv_seqlen: np.arange(kv_sequence_length) < nonpad_kv_seqlen[:, np.newaxis], reshape(batch_size, 1, 1, kv_sequence_length))
# style: ONNX's NumPy reference: np.tril of a boolean ones matrix over (q_len, total_len), the padding mask a broadcast comparison reshaped to four axes
# adapter: np.* rewritten as torch.* one for one; q_sequence_length = n, kv_sequence_length = m (keys include the past_key rows concatenated before the new ones); the temp_mask before its logical_not (True = may attend); 335daa9 has no padding input, so padding_mask is the later nonpad_kv_seqlen block
# expect: fail diagnosis=causal-no-offset
# bug: as published: with a cache (m > n) np.tril(..., k=0) aligns the mask top-left, so new query i sees keys 0..i only instead of 0..m - n + i; later versions of the file replaced it with _apply_causal(mask, past_sequence_length), "bottom-right / offset-aligned"
from __future__ import annotations

import torch


def causal_mask(n: int, m: int | None = None) -> torch.Tensor:
    q_sequence_length = n
    kv_sequence_length = n if m is None else m
    temp_mask = torch.ones((q_sequence_length, kv_sequence_length), dtype=torch.bool)
    temp_mask = torch.tril(temp_mask, diagonal=0)
    return temp_mask


def padding_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    batch_size = lengths.shape[0]
    kv_sequence_length = max_len
    padding_mask = torch.arange(kv_sequence_length, device=lengths.device) < lengths[:, None]
    padding_mask = padding_mask.reshape(batch_size, 1, 1, kv_sequence_length)
    return padding_mask
