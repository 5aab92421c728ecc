# quizprep: exercise=attention
# style: xformers-like memory-efficient attention: queries processed in chunks of 4 with torch.split, each chunk's scores, softmax and values computed separately, results concatenated; the mask sliced per chunk
# expect: fail diagnosis=query-rows-dropped
# bug: the mask is sliced along its query axis (mask[..., start:stop, :]) without first being broadcast to (..., n, m): a key-padding mask of shape (B, 1, 1, m) has one query row, so every chunk after the first gets an empty (B, 1, 0, m) slice; a chunk of one query broadcasts against it to zero rows (the output silently loses that query), a longer chunk raises a broadcast error. (n, m) masks work
import torch

CHUNK = 4


def scaled_dot_product_attention(q, k, v, mask=None):
    scale = q.shape[-1] ** -0.5
    kt = k.transpose(-2, -1)
    outs, weights = [], []
    start = 0
    for q_chunk in torch.split(q, CHUNK, dim=-2):
        stop = start + q_chunk.shape[-2]
        s = (q_chunk @ kt) * scale
        if mask is not None:
            m_chunk = mask[..., start:stop, :] if mask.dim() >= 2 else mask
            s = s.masked_fill(~m_chunk, float("-inf"))
        p = torch.softmax(s, dim=-1)
        outs.append(p @ v)
        weights.append(p)
        start = stop
    return torch.cat(outs, dim=-2), torch.cat(weights, dim=-2)
