# quizprep: exercise=attention
# source: tinygrad/tinygrad tinygrad/tensor.py @ ea74856d99f3b30e17e4bec82200a3536052088f (Tensor.scaled_dot_product_attention(key, value, attn_mask=None, dropout_p=0.0, is_causal=False): a boolean attn_mask becomes (attn_mask == 0).where(-inf, 0); qk = self @ key.transpose(-2,-1) / math.sqrt(self.shape[-1]); ((qk + attn_mask) if attn_mask is not None else qk).softmax(-1).dropout(dropout_p) @ value; Tensor._softmax / softmax as in the same file)
# style: a method on the query tensor in a tiny autograd library: a boolean mask turned into an additive 0/-inf tensor with `where`, divide by sqrt(d) after the matmul, the library's own softmax (max with keepdim, exp, divide by the sum), all in the input dtype
# adapter: Tensor methods written as torch ops; tinygrad's `where` with Python constants makes the 0/-inf tensor in q's dtype here (torch.where with scalars would make it float32 and promote half scores); is_causal and dropout left out (the contract passes the mask, and tinygrad's dropout is the identity outside Tensor.training); the weights (the softmax) are returned as well as the output
# expect: pass
from __future__ import annotations

import math

import torch


def _softmax(self: torch.Tensor, axis: int):
    m = self - self.amax(dim=axis, keepdim=True)
    e = m.exp()
    return m, e, e.sum(dim=axis, keepdim=True)


def softmax(self: torch.Tensor, axis: int = -1) -> torch.Tensor:
    _, e, ss = _softmax(self, axis)
    return e.div(ss)


def scaled_dot_product_attention(q, k, v, mask=None):
    self, key, value, attn_mask = q, k, v, mask
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        attn_mask = torch.where(attn_mask == 0, torch.tensor(-float("inf"), dtype=self.dtype, device=self.device),
                                torch.tensor(0, dtype=self.dtype, device=self.device))
    qk = self @ key.transpose(-2, -1) / math.sqrt(self.shape[-1])
    weights = softmax((qk + attn_mask) if attn_mask is not None else qk, -1)
    return weights @ value, weights
