# quizprep: exercise=attention
# style: Hugging Face eager attention: additive mask filled with torch.finfo(dtype).min, scaling = head_dim**-0.5
# expect: fail diagnosis=mask-inverted
# bug: the finfo.min fill goes where mask is True (the visible keys) instead of where it is False
import torch
from torch import nn


def scaled_dot_product_attention(q, k, v, mask=None):
    scaling = q.shape[-1] ** -0.5
    attn_weights = torch.matmul(q, k.transpose(-1, -2)) * scaling
    if mask is not None:
        min_dtype = torch.finfo(q.dtype).min
        attention_mask = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(mask, min_dtype)
        attn_weights = attn_weights + attention_mask
    attn_weights = nn.functional.softmax(attn_weights, dim=-1)
    return torch.matmul(attn_weights, v), attn_weights
