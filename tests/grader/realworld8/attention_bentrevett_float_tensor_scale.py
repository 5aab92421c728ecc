# quizprep: exercise=attention
# source: bentrevett/pytorch-seq2seq "6 - Attention is All You Need" (MultiHeadAttentionLayer: self.scale = torch.sqrt(torch.FloatTensor([self.head_dim])).to(device); energy = torch.matmul(Q, K.permute(0, 1, 3, 2)) / self.scale; energy.masked_fill(mask == 0, -1e10); torch.softmax(energy, dim=-1))
# style: the scale kept as a one-element float32 tensor built at init, 4-D permute, -1e10 fill
# adapter: q, k, v given; leading dims flattened to the repo's (batch, heads) = (1, ·) so its 4-D permute applies; the tutorial's `.to(device)` follows q's device; shapes restored
# expect: fail diagnosis=dtype-mixed
# bug: dividing by a float32 tensor of shape [1] promotes a float16/bfloat16 energy to float32 (a dimensioned tensor takes part in type promotion, a Python float would not): the float32 weights then meet the half-precision V in torch.matmul, which refuses mixed dtypes
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    lead, n, m = q.shape[:-2], q.shape[-2], k.shape[-2]
    Q, K, V = (t.reshape(1, -1, t.shape[-2], t.shape[-1]) for t in (q, k, v))
    scale = torch.sqrt(torch.FloatTensor([q.shape[-1]])).to(q.device)
    energy = torch.matmul(Q, K.permute(0, 1, 3, 2)) / scale
    if mask is not None:
        energy = energy.masked_fill(mask.expand(*lead, n, m).reshape(1, -1, n, m) == 0, -1e10)
    attention = torch.softmax(energy, dim=-1)
    x = torch.matmul(attention, V)
    return x.reshape(*lead, n, v.shape[-1]), attention.reshape(*lead, n, m)
