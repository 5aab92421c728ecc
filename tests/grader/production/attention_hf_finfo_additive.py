# quizprep: exercise=attention
# style: Hugging Face: boolean mask turned into an additive float mask of finfo.min, softmax(dtype=float32)
# expect: pass
import torch
from torch import nn


def scaled_dot_product_attention(q, k, v, mask=None):
    scaling = q.shape[-1] ** -0.5
    attn_weights = torch.matmul(q * scaling, k.transpose(-1, -2))
    if mask is not None:
        additive = torch.zeros(mask.shape, dtype=attn_weights.dtype, device=attn_weights.device)
        additive = additive.masked_fill(~mask, torch.finfo(attn_weights.dtype).min)
        attn_weights = attn_weights + additive
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(q.dtype)
    return torch.matmul(attn_weights, v), attn_weights
