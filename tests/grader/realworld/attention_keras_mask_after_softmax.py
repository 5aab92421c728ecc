# quizprep: exercise=attention
# style: Keras-like: the mask multiplies the attention weights as a float tensor
# expect: fail diagnosis=mask-after-softmax
# bug: the softmax runs on the unmasked scores; the mask then zeroes weights without renormalising
import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    dk = q.shape[-1]
    logits = torch.matmul(q, k.transpose(-1, -2)) / dk ** 0.5
    attention_weights = F.softmax(logits, dim=-1)
    if mask is not None:
        attention_weights = attention_weights * mask.to(attention_weights.dtype)
    output = torch.matmul(attention_weights, v)
    return output, attention_weights
