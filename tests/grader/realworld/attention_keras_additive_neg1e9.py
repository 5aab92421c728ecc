# quizprep: exercise=attention
# style: Keras/TensorFlow tutorial port: dk as a tensor, logits += (1 - mask) * -1e9, dropout with an explicit training flag
# expect: pass
import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None, dropout_rate=0.0, training=False):
    matmul_qk = torch.matmul(q, k.transpose(-1, -2))
    dk = torch.tensor(k.shape[-1], dtype=q.dtype)
    scaled_attention_logits = matmul_qk / torch.sqrt(dk)
    if mask is not None:
        # the tutorial's mask is 1 where padded; ours is True where visible
        scaled_attention_logits += (1.0 - mask.to(q.dtype)) * -1e9
    attention_weights = F.softmax(scaled_attention_logits, dim=-1)
    attention_weights = F.dropout(attention_weights, p=dropout_rate, training=training)
    output = torch.matmul(attention_weights, v)
    return output, attention_weights
