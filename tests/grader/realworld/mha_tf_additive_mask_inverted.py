# quizprep: exercise=mha
# style: TensorFlow tutorial port: scaled_attention_logits += mask * -1e9 (additive -1e9 mask)
# expect: fail diagnosis=mask-inverted
# bug: the tutorial's mask is 1 where padded; applied to a True-means-visible mask it hides exactly the visible keys
import torch
import torch.nn.functional as F
from torch import nn


def scaled_dot_product_attention(q, k, v, mask):
    matmul_qk = torch.matmul(q, k.transpose(-1, -2))
    dk = torch.tensor(k.shape[-1], dtype=q.dtype)
    scaled_attention_logits = matmul_qk / torch.sqrt(dk)
    if mask is not None:
        scaled_attention_logits += mask.to(q.dtype) * -1e9
    attention_weights = F.softmax(scaled_attention_logits, dim=-1)
    return torch.matmul(attention_weights, v), attention_weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.num_heads = n_heads
        self.d_model = d_model
        self.depth = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split_heads(self, x, batch_size):
        x = torch.reshape(x, (batch_size, -1, self.num_heads, self.depth))
        return x.permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        batch_size = query.shape[0]
        q = self.split_heads(self.W_q(query), batch_size)
        k = self.split_heads(self.W_k(key), batch_size)
        v = self.split_heads(self.W_v(value), batch_size)
        scaled_attention, attention_weights = scaled_dot_product_attention(q, k, v, mask)
        scaled_attention = scaled_attention.permute(0, 2, 1, 3)
        concat_attention = torch.reshape(scaled_attention, (batch_size, -1, self.d_model))
        return self.W_o(concat_attention), attention_weights
