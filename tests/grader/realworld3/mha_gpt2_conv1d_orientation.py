# quizprep: exercise=mha
# style: GPT-2's Conv1D habit (x @ W + b) applied to nn.Linear weights
# expect: fail diagnosis=weight-transposed
# bug: multiplies by W instead of W.T for every projection
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_head, self.split_size = n_heads, d_model
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    @staticmethod
    def _conv1d(layer, x):
        return torch.addmm(layer.bias, x.reshape(-1, x.size(-1)), layer.weight).view(*x.shape[:-1], -1)

    def _split_heads(self, tensor):
        new_shape = tensor.size()[:-1] + (self.n_head, tensor.size(-1) // self.n_head)
        return tensor.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        q = self._split_heads(self._conv1d(self.W_q, query))
        k = self._split_heads(self._conv1d(self.W_k, key))
        v = self._split_heads(self._conv1d(self.W_v, value))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(v.size(-1))
        if mask is not None:
            w = torch.where(mask, w, torch.finfo(w.dtype).min)
        w = nn.functional.softmax(w, dim=-1)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        a = a.view(*a.size()[:-2], self.split_size)
        return self._conv1d(self.W_o, a), w
