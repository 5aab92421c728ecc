# quizprep: exercise=masking
# source: tensorflow/tensor2tensor tensor2tensor/layers/common_attention.py and tensor2tensor/layers/common_layers.py @ bafdc1b67730430d38d6ab802cbd51f9d053ba2e (attention_bias_lower_triangle(length) = attention_bias_local(length, -1, 0) = -1e9 * (1 - ones_matrix_band_part(length, length, -1, 0, out_shape=[1, 1, length, length])), the band built in NumPy from np.tri when the sizes are Python ints; attention_bias_ignore_padding(memory_padding) = memory_padding * large_compatible_negative(dtype), expanded to [batch, 1, 1, memory_length], with memory_padding 1.0 at padded positions; fast decoding slices the square bias per step as bias[:, :, i:i + 1, :i + 1])
# style: Tensor2Tensor: every mask an additive bias (-1e9, or the dtype's lowest for float16) rather than a boolean, the causal band built in NumPy with np.tri and a (num_lower, num_upper) band convention where -1 means unlimited, padding given as a float 1.0-at-PAD vector expanded to [batch, 1, 1, length]
# adapter: NumPy band kept, tf.constant → torch.tensor; the square bias for m positions sliced to its last n rows (fast decoding's per-step slice, generalised to n new tokens); padding from lengths via tf.sequence_mask's rule (arange(maxlen) < lengths) as float, 1 - that being T2T's memory_padding; biases turned into the contract's booleans by == 0
# expect: pass
from __future__ import annotations

import numpy as np
import torch


def large_compatible_negative(tensor_type):
    if tensor_type == torch.float16:
        return torch.finfo(torch.float16).min
    return -1e9


def ones_matrix_band_part(rows, cols, num_lower, num_upper, out_shape=None):
    """Matrix band part of ones."""
    if all([isinstance(el, int) for el in [rows, cols, num_lower, num_upper]]):
        # Needed info is constant, so we construct in numpy
        if num_lower < 0:
            num_lower = rows - 1
        if num_upper < 0:
            num_upper = cols - 1
        lower_mask = np.tri(cols, rows, num_lower).T
        upper_mask = np.tri(rows, cols, num_upper)
        band = np.ones((rows, cols)) * lower_mask * upper_mask
        if out_shape:
            band = band.reshape(out_shape)
        band = torch.tensor(band, dtype=torch.float32)
    return band


def attention_bias_local(length, max_backward, max_forward):
    band = ones_matrix_band_part(
        length,
        length,
        max_backward,
        max_forward,
        out_shape=[1, 1, length, length])
    return -1e9 * (1.0 - band)


def attention_bias_lower_triangle(length):
    return attention_bias_local(length, -1, 0)


def attention_bias_ignore_padding(memory_padding):
    ret = memory_padding * large_compatible_negative(memory_padding.dtype)
    return ret.unsqueeze(1).unsqueeze(1)


def sequence_mask(lengths, maxlen):
    # tf.sequence_mask(lengths, maxlen, dtype=tf.float32)
    return (torch.arange(maxlen, device=lengths.device)[None, :] < lengths[:, None]).to(torch.float32)


def causal_mask(n, m=None):
    m = n if m is None else m
    bias = attention_bias_lower_triangle(m)
    # fast decoding: bias[:, :, i:i + 1, :i + 1] for the token at position i
    return bias[0, 0, m - n:, :m] == 0


def padding_mask(lengths, max_len):
    memory_padding = 1.0 - sequence_mask(lengths, max_len)
    return attention_bias_ignore_padding(memory_padding) == 0
