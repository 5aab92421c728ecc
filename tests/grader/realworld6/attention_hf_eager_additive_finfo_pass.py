# quizprep: exercise=attention
# style: Hugging Face eager_attention_forward: the boolean mask turned into an additive float mask ((1 - mask) * finfo(dtype).min), attn_weights = matmul * scaling + causal_mask, softmax in float32 then .to(query.dtype)
# expect: pass
import torch
from torch import nn


def _to_additive(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    # the _prepare_4d_attention_mask idea: 0 where visible, the most negative finite number elsewhere
    inverted = 1.0 - mask.to(dtype)
    return inverted.masked_fill(inverted.to(torch.bool), torch.finfo(dtype).min)


def scaled_dot_product_attention(q, k, v, mask=None):
    scaling = q.shape[-1] ** -0.5
    attn_weights = torch.matmul(q, k.transpose(-1, -2)) * scaling
    if mask is not None:
        causal_mask = _to_additive(mask, attn_weights.dtype)
        attn_weights = attn_weights + causal_mask
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(q.dtype)
    attn_output = torch.matmul(attn_weights, v)
    return attn_output, attn_weights
