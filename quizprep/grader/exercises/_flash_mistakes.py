"""The flash exercise's named slips, simulated tile by tile with the learner's own block size:
their wrong answers depend on where the blocks fall, so each is the online-softmax loop (or
exact attention under a wrong mask or scale) with one thing done wrong."""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from quizprep.grader import reference
from quizprep.grader.lessons import lesson
from quizprep.grader.problem import Case, Hypothesis, either

F32, F64 = torch.float32, torch.float64


def tiled(case: Case, *, rescale_sum: bool = True, rescale_acc: bool = True, normalise: str = "end",
          mask: Tensor | None = None, shift: bool = True, dtype: torch.dtype = F64,
          block_max: bool = False) -> dict[str, Tensor]:
    """The online-softmax loop over key blocks, with the named slip switched on.

    normalise: "end" (divide once), "loop" (divide inside the loop without re-multiplying the
    previous output by its old sum) or "loop-and-end" (that, and once more at the end)."""
    data = case.data
    q, k, v = (data[name].to(dtype) for name in ("q", "k", "v"))
    n, m, block = q.shape[-2], k.shape[-2], data["block"]
    if mask is None and data["causal"]:
        mask = reference.causal_mask(n, m)
    scale = 1.0 / math.sqrt(q.shape[-1])
    row_max = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=dtype)
    row_sum = torch.zeros_like(row_max)
    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=dtype)
    for start in range(0, m, block):
        stop = min(start + block, m)
        scores = (q @ k[..., start:stop, :].transpose(-2, -1)) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask[..., start:stop], float("-inf"))
        if shift:
            new_max = torch.maximum(row_max, scores.amax(dim=-1, keepdim=True))
            finite = new_max.masked_fill(torch.isneginf(new_max), 0.0)
            own = scores.amax(dim=-1, keepdim=True)  # block_max: exp against the block's own maximum
            base = own.masked_fill(torch.isneginf(own), 0.0) if block_max else finite
            weights, alpha = (scores - base).exp(), (row_max - finite).exp()
        else:
            new_max, weights, alpha = row_max, scores.exp(), torch.ones_like(row_max)
        new_sum = row_sum * (alpha if rescale_sum else 1.0) + weights.sum(dim=-1, keepdim=True)
        block_out = weights @ v[..., start:stop, :]
        if normalise == "end":
            acc = acc * (alpha if rescale_acc else 1.0) + block_out
        else:
            acc = (acc * alpha + block_out) / new_sum
        row_max, row_sum = new_max, new_sum
    out = acc if normalise == "loop" else acc / row_sum
    return {"out": out.double()}


def _slip(**mistake: Any):
    return lambda case: tiled(case, **mistake)


def _overflow(case: Case) -> dict[str, Tensor] | None:
    dtype = case.data["q"].dtype
    return tiled(case, shift=False, dtype=F32 if dtype in (torch.float16, torch.bfloat16) else dtype)


def _ring_order(blocks: int, first_position: int, block: int) -> list[int]:
    """Ring attention's schedule on one device: a query tile (a rank) starts with the key block
    holding its first position, then takes the blocks before it, wrapping round."""
    own = min(max(first_position, 0) // block, blocks - 1)
    return [(own - step) % blocks for step in range(blocks)]


def merged_partials(case: Case, merge: str, order: str, dtype: torch.dtype = F64) -> dict[str, Tensor]:
    """Ring attention and Flash-Decoding's form: each key block gives a normalised partial output
    and its log-sum-exp, folded into the running (out, lse) in `order` ("forward", or "ring" with
    query tiles of block_size); blocks wholly after a query tile are skipped under causal.

    merge: "right", "log1p-exp" (lse + log(1 + exp(lse_b − lse)): exp of an unshifted difference,
    inf once a later block's lse is ~88 above in float32), "log-exp-sum" (log(exp(lse) + exp(lse_b)),
    inf once either is) or "swapped" (the old output weighed by the new block's share
    exp(lse_b − lse_new) and the block by the old one's)."""
    data = case.data
    q, k, v = (data[name].to(dtype) for name in ("q", "k", "v"))
    n, m, block = q.shape[-2], k.shape[-2], data["block"]
    scale, blocks, tiles = 1.0 / math.sqrt(q.shape[-1]), -(-m // block), []
    for q_start in range(0, n, block if order == "ring" else n):
        q_tile = q[..., q_start:q_start + block if order == "ring" else n, :]
        positions = torch.arange(q_start, q_start + q_tile.shape[-2]) + (m - n)
        visits = _ring_order(blocks, int(positions[0]), block) if order == "ring" else range(blocks)
        out = lse = None
        for index in visits:
            start = index * block
            if data["causal"] and start > int(positions[-1]):
                continue
            stop = min(start + block, m)
            scores = (q_tile @ k[..., start:stop, :].transpose(-2, -1)) * scale
            if data["causal"]:
                hidden = torch.arange(start, stop).unsqueeze(0) > positions.unsqueeze(-1)
                scores = scores.masked_fill(hidden, float("-inf"))
            top = scores.amax(dim=-1, keepdim=True)
            top = top.masked_fill(torch.isneginf(top), 0.0)
            weights = (scores - top).exp()
            total = weights.sum(dim=-1, keepdim=True)
            block_out = (weights @ v[..., start:stop, :]) / total.masked_fill(total == 0, 1.0)
            block_lse = top + total.log()
            if out is None or lse is None:
                out, lse = block_out, block_lse
                continue
            if merge == "log1p-exp":
                new_lse = lse + torch.log(1 + torch.exp(block_lse - lse))
            elif merge == "log-exp-sum":
                new_lse = torch.log(torch.exp(lse) + torch.exp(block_lse))
            else:
                new_lse = torch.logaddexp(lse, block_lse)
            old_share, new_share = (lse - new_lse).exp(), (block_lse - new_lse).exp()
            if merge == "swapped":
                old_share, new_share = new_share, old_share
            out, lse = old_share * out + new_share * block_out, new_lse
        tiles.append(out if out is not None else torch.zeros((*q_tile.shape[:-1], v.shape[-1]), dtype=dtype))
    return {"out": torch.cat(tiles, dim=-2).double()}


def _partials(merge: str, *, low_precision: bool = False):
    """merged_partials in the orders code visits blocks: forward, or ring attention's."""
    def predict(case: Case) -> list[dict[str, Tensor]]:
        dtype = case.data["q"].dtype
        work = (F32 if dtype in (torch.float16, torch.bfloat16) else dtype) if low_precision else F64
        return [merged_partials(case, merge, order, work) for order in ("forward", "ring")]

    return predict


def _no_shift(case: Case) -> list[dict[str, Tensor]]:
    """exp without its max shift: of the scores, or of the difference of two blocks' lse as their
    partial outputs are merged."""
    return [_overflow(case), *_partials("log1p-exp", low_precision=True)(case),
            *_partials("log-exp-sum", low_precision=True)(case)]


def _block_mask(rule: str):
    """Causal masking decided per block instead of per element (positions as in causal_mask)."""
    def predict(case: Case) -> dict[str, Tensor] | None:
        data = case.data
        if not data["causal"]:
            return None
        n, m, block = data["q"].shape[-2], data["k"].shape[-2], data["block"]
        keys = torch.arange(m).unsqueeze(0)
        first_key, last_key = keys // block * block, torch.clamp((keys // block + 1) * block, max=m) - 1
        queries = torch.arange(n).unsqueeze(-1)
        position = queries + (m - n)
        if rule == "whole diagonal block":
            allowed = first_key <= position
        elif rule == "diagonal block skipped":
            allowed = last_key <= position
        else:  # query tiles too: a tile is kept whole when its first key is before its last query
            last_query = torch.clamp((queries // block + 1) * block, max=n) - 1 + (m - n)
            allowed = first_key <= last_query
        return {"out": reference.attention(data["q"], data["k"], data["v"], allowed)[0]}

    return predict


def _tail_dropped(case: Case) -> dict[str, Tensor] | None:
    """Only whole blocks are visited (range(0, m - block + 1, block), m // block blocks, unfold): the
    last m mod block keys are never seen."""
    data = case.data
    n, m, block = data["q"].shape[-2], data["k"].shape[-2], data["block"]
    kept = m // block * block
    if kept == m:
        return None
    allowed = (torch.arange(m) < kept).expand(n, m)
    if data["causal"]:
        allowed = allowed & reference.causal_mask(n, m)
    return {"out": reference.attention(data["q"], data["k"], data["v"], allowed)[0]}


def _skip_at_last_query(tile_of: str):
    """The causal key loop stops at blocks starting before the query tile's last position (`break`
    when k_start >= last, or range(0, last, block)), so the block that starts exactly there is
    skipped: the tile's last query loses its own key. Query tiles of `block_size`, or all queries."""
    def predict(case: Case) -> dict[str, Tensor] | None:
        data = case.data
        if not data["causal"]:
            return None
        n, m, block = data["q"].shape[-2], data["k"].shape[-2], data["block"]
        tile = block if tile_of == "block" else n
        queries = torch.arange(n).unsqueeze(-1)
        last = torch.clamp((queries // tile + 1) * tile, max=n) - 1 + (m - n)
        limit = (last + block - 1) // block * block  # keys of the blocks that start before `last`
        allowed = reference.causal_mask(n, m) & (torch.arange(m).unsqueeze(0) < limit)
        return {"out": reference.attention(data["q"], data["k"], data["v"], allowed)[0]}

    return predict


def _exact(causal_rule=None, *, offset_only: bool = False, scale_of=None):
    """Exact attention with a wrong causal rule (allowed(n, m) -> (n, m) bools) or a wrong scale."""
    def predict(case: Case) -> dict[str, Tensor] | None:
        data = case.data
        n, m = data["q"].shape[-2], data["k"].shape[-2]
        if causal_rule is not None and (not data["causal"] or (offset_only and n == m)):
            return None
        mask = causal_rule(n, m) if causal_rule is not None else \
            (reference.causal_mask(n, m) if data["causal"] else None)
        scale = None if scale_of is None else scale_of(data["q"].shape[-1])
        return {"out": reference.attention(data["q"], data["k"], data["v"], mask, scale=scale)[0]}

    return predict


def _offset_sign(case: Case) -> list[dict[str, Tensor]] | None:
    """Queries at i + (n − m): the first m − n of them see no key at all, which code returns as NaN
    (0/0), as the mean of V (a finite fill) or as zeros (a guarded division)."""
    data = case.data
    n, m = data["q"].shape[-2], data["k"].shape[-2]
    if not data["causal"] or n == m:
        return None
    allowed = torch.arange(m).unsqueeze(0) <= torch.arange(n).unsqueeze(-1) + (n - m)
    out = reference.attention(data["q"], data["k"], data["v"], allowed)[0]
    blind = ~allowed.any(dim=-1, keepdim=True)
    uniform = data["v"].double().mean(dim=-2, keepdim=True).expand_as(out)
    return [{"out": out}, {"out": torch.where(blind, uniform, out)}, {"out": out.masked_fill(blind, 0.0)}]


HYPOTHESES = (
    Hypothesis("flash-exp-block-max", "the block's scores are exponentiated against the block's own maximum, "
               "while ℓ and the accumulator are rescaled to the running one: a block below the running maximum "
               "weighs exp(m_run − m_block) times too much", "P = exp(S − m_new) with m_new the new running "
               "maximum, the same value the rescale exp(m_old − m_new) uses.", lesson("flash-online-softmax-bug"),
               _slip(block_max=True)),
    Hypothesis("flash-no-rescale", "the running max is updated without rescaling the accumulator and the "
               "denominator by exp(m_old − m_new)",
               "When a block raises the row maximum, multiply both ℓ and the output accumulator by "
               "exp(m_old − m_new) before adding the block's terms.", lesson("flash-online-softmax-bug"),
               either(_slip(rescale_sum=False, rescale_acc=False), _slip(rescale_acc=False),
                      _slip(rescale_sum=False))),
    Hypothesis("flash-divide-in-loop", "the output is divided by the denominator inside the loop without "
               "multiplying the previous output back by its old sum",
               "Keep the accumulator unnormalised and divide by ℓ once after the last block (or rescale the "
               "previous output by ℓ_old·exp(m_old − m_new)/ℓ_new).", lesson("flash-online-output"),
               either(_slip(normalise="loop"), _slip(normalise="loop-and-end"))),
    Hypothesis("flash-merge-weights-swapped", "the running output and the new block's partial output are merged with "
               "each other's weights: the old output gets the block's share exp(lse_b − lse_new), the block the "
               "old one's", "out_new = exp(lse − lse_new)·out + exp(lse_b − lse_new)·out_b (in sigmoid form, "
               "out − sigmoid(lse_b − lse)·(out − out_b)): each output keeps its own log-sum-exp's share.",
               lesson("flash-online-output"), _partials("swapped")),
    Hypothesis("flash-causal-per-block", "causal masking decided per block instead of per element: the "
               "diagonal block is kept or dropped whole",
               "Skip the blocks entirely in the future, and mask the diagonal block element by element: key "
               "j is visible to query i when j ≤ i + (m − n).", lesson("flash-causal-tiles"),
               either(_block_mask("whole diagonal block"), _block_mask("diagonal block skipped"),
                      _block_mask("query tiles"))),
    Hypothesis("flash-tail-block-dropped", "only whole blocks are visited: when block_size does not divide m, "
               "the last m mod block_size keys are never seen", "Let the last block be shorter: loop "
               "`for start in range(0, m, block_size)` with `stop = min(start + block_size, m)` (Tensor.unfold and "
               "m // block_size both drop the tail).", lesson("flash-causal-tiles"), _tail_dropped),
    Hypothesis("flash-causal-skip-off-by-one", "the causal loop skips the key block that starts exactly at the "
               "query tile's last position (k_start >= last instead of >): that query loses its own key",
               "A key block lies in the future only when its first key is after the tile's last query position: "
               "skip it when k_start > q_end − 1 + (m − n), i.e. loop while k_start < q_end + (m − n).",
               lesson("flash-causal-tiles"), either(_skip_at_last_query("block"), _skip_at_last_query("all"))),
    Hypothesis("no-max-shift", "exp of the scores without the max shift: large logits overflow to inf and NaN",
               "Subtract the running maximum before exp, and rescale when it grows.", lesson("softmax-max-shift"),
               _no_shift, nonfinite_must_match=True),
    Hypothesis("causal-no-diagonal", "the causal mask hides the query's own position (j < i instead of j ≤ i)",
               "A token attends to itself: key j is visible when j ≤ i + (m − n).", lesson("masking-causal-diagonal"),
               _exact(lambda n, m: torch.arange(m).unsqueeze(0) < torch.arange(n).unsqueeze(-1) + (m - n))),
    Hypothesis("causal-no-offset", "with m > n the queries were placed at positions 0 … n − 1 instead of the last n",
               "Query i sits at position i + (m − n), as in causal_mask(n, m).", lesson("masking-kv-cache-offset"),
               _exact(lambda n, m: torch.arange(m).unsqueeze(0) <= torch.arange(n).unsqueeze(-1), offset_only=True)),
    Hypothesis("causal-offset-sign", "the causal offset has the wrong sign: queries placed at i + (n − m), "
               "before the cache, instead of i + (m − n)", "With m > n the queries are the LAST n positions: key j "
               "is visible to query i when j ≤ i + (m − n).", lesson("masking-kv-cache-offset"),
               _offset_sign, nonfinite_must_match=True),
    Hypothesis("no-scale", "missing the 1/√d_k scaling", "Multiply the scores by 1/math.sqrt(q.shape[-1]).",
               lesson("scaling-why-sqrt-dk"), _exact(scale_of=lambda d: 1.0)),
    Hypothesis("scale-dk", "scores divided by d_k instead of √d_k",
               "The standard deviation of q·k grows like √d_k: multiply by 1/math.sqrt(d_k).",
               lesson("scaling-why-sqrt-dk"), _exact(scale_of=lambda d: 1.0 / d)),
)
