# quizprep: exercise=masking
# source: facebookresearch/fairseq fairseq/models/transformer/transformer_decoder.py, fairseq/data/data_utils.py and fairseq/utils.py @ 3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99 (TransformerDecoderBase.buffered_future_mask(tensor): dim = tensor.size(0) (time-first), a cached torch.triu(utils.fill_with_neg_inf(torch.zeros([dim, dim])), 1) returned as self._future_mask[:dim, :dim]; data_utils.lengths_to_padding_mask(lens): arange(max(lens)) >= lens[:, None], True = PAD; lengths_to_mask = ~lengths_to_padding_mask)
# style: fairseq: the causal mask an additive float square (0 on and below the diagonal, -inf above) cached on the decoder and sliced [:dim, :dim], made fp16-safe by filling in float and casting back; padding masks with True = PAD (the contract's opposite), inverted by a second helper
# adapter: buffered_future_mask on a dummy time-first tensor of m steps; the additive mask turned into the contract's booleans by == 0; lengths_to_padding_mask given the contract's max_len instead of max(lens) (fairseq sizes the mask to the longest sequence); lengths_to_mask (True = keep) viewed (B, 1, 1, max_len); fairseq's incremental decoding never builds an (n, m) mask with n > 1 (it passes no mask for one new token), so which rows of the square the n queries take is the adapter's choice
# expect: pass
from __future__ import annotations

import torch


def fill_with_neg_inf(t):
    """FP16-compatible function that fills a tensor with -inf."""
    return t.float().fill_(float("-inf")).type_as(t)


class _Decoder:
    def __init__(self):
        self._future_mask = torch.empty(0)

    def buffered_future_mask(self, tensor):
        dim = tensor.size(0)
        # self._future_mask.device != tensor.device is not working in TorchScript. This is a workaround.
        if (
            self._future_mask.size(0) == 0
            or (not self._future_mask.device == tensor.device)
            or self._future_mask.size(0) < dim
        ):
            self._future_mask = torch.triu(
                fill_with_neg_inf(torch.zeros([dim, dim])), 1
            )
        self._future_mask = self._future_mask.to(tensor)
        return self._future_mask[:dim, :dim]


def lengths_to_padding_mask(lens, max_lens):
    bsz = lens.size(0)
    mask = torch.arange(max_lens).to(lens.device).view(1, max_lens)
    mask = mask.expand(bsz, -1) >= lens.view(bsz, 1).expand(-1, max_lens)
    return mask


# lens: torch.LongTensor
# returns: torch.BoolTensor
def lengths_to_mask(lens, max_lens):
    return ~lengths_to_padding_mask(lens, max_lens)


def causal_mask(n, m=None):
    m = n if m is None else m
    # the full square for all m positions; the queries are its last n rows
    future_mask = _Decoder().buffered_future_mask(torch.zeros(m, 1))
    return future_mask[m - n:, :m] == 0


def padding_mask(lengths, max_len):
    return lengths_to_mask(lengths, max_len).view(lengths.size(0), 1, 1, max_len)
