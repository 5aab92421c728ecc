# quizprep: exercise=attention
# source: huggingface/pytorch-image-models timm/models/vision_transformer.py (Attention.forward's non-fused path: q = q * self.scale; attn = q @ k.transpose(-2, -1); attn.softmax(dim=-1)), the mask added as timm's attn_mask does
# style: q scaled before the matmul, the boolean mask turned into an additive bias with torch.zeros_like + masked_fill(-inf), softmax as a Tensor method
# expect: pass
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scale = q.shape[-1] ** -0.5
    q = q * scale
    attn = q @ k.transpose(-2, -1)
    if mask is not None:
        bias = torch.zeros(mask.shape, dtype=attn.dtype, device=attn.device).masked_fill(~mask, float("-inf"))
        attn = attn + bias
    attn = attn.softmax(dim=-1)
    return attn @ v, attn
