# quizprep: exercise=attention
# style: explicit loops over flattened batch rows, numpy habits (shape unpacking, .T), a helper per row
# expect: fail diagnosis=scale-dk
# bug: scores divided by d_k instead of sqrt(d_k)
import torch


def _attend_row(qi, K, V, keep):
    d_k = qi.shape[-1]
    s = (K @ qi) / d_k
    if keep is not None:
        s = s.masked_fill(~keep, -1e9)
    w = torch.exp(s - s.max())
    w = w / w.sum()
    return w @ V, w


def scaled_dot_product_attention(q, k, v, mask=None):
    *batch, n, d_k = q.shape
    m = k.shape[-2]
    Q = q.reshape(-1, n, d_k)
    K = k.reshape(-1, m, d_k)
    V = v.reshape(-1, m, v.shape[-1])
    M = None if mask is None else torch.broadcast_to(mask, (*batch, n, m)).reshape(-1, n, m)
    outs, ws = [], []
    for b in range(Q.shape[0]):
        row_out, row_w = [], []
        for i in range(n):
            o, w = _attend_row(Q[b, i], K[b], V[b], None if M is None else M[b, i])
            row_out.append(o)
            row_w.append(w)
        outs.append(torch.stack(row_out))
        ws.append(torch.stack(row_w))
    out = torch.stack(outs).reshape(*batch, n, V.shape[-1])
    weights = torch.stack(ws).reshape(*batch, n, m)
    return out, weights
