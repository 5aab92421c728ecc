"""The float64 reference engine agrees with torch's SDPA on many shapes and masks."""
from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from quizprep.grader import reference


@settings(max_examples=40, deadline=None)
@given(
    lead=st.lists(st.integers(1, 3), max_size=3),
    n=st.integers(1, 7), m=st.integers(1, 7), dk=st.integers(1, 9), dv=st.integers(1, 9),
    mask_kind=st.sampled_from([None, "causal", "random", "padding"]),
    seed=st.integers(0, 2**16),
)
def test_attention_matches_sdpa(lead, n, m, dk, dv, mask_kind, seed):
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(*lead, n, dk, generator=generator, dtype=torch.float64) * 2
    k = torch.randn(*lead, m, dk, generator=generator, dtype=torch.float64) * 2
    v = torch.randn(*lead, m, dv, generator=generator, dtype=torch.float64)
    if mask_kind == "causal":
        mask = reference.causal_mask(n, m)
    elif mask_kind == "random":
        mask = torch.rand(n, m, generator=generator) < 0.6
    elif mask_kind == "padding":
        mask = (torch.arange(m) < torch.randint(0, m + 1, (1,), generator=generator)).reshape(1, m)
    else:
        mask = None
    out, weights = reference.attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    defined = ~torch.isnan(out)
    if mask is not None:
        defined &= mask.any(-1, keepdim=True).expand_as(out)
    torch.testing.assert_close(out[defined], expected[defined], rtol=1e-12, atol=1e-12)
    rows = weights[~torch.isnan(weights)].reshape(-1, m) if m else weights
    torch.testing.assert_close(rows.sum(-1), torch.ones(rows.shape[0], dtype=torch.float64))


def test_fully_masked_rows_are_nan():
    q = k = v = torch.randn(3, 2, dtype=torch.float64)
    mask = torch.tensor([[True, False, False], [False, False, False], [True, True, True]])
    out, weights = reference.attention(q, k, v, mask)
    assert torch.isnan(out[1]).all() and torch.isfinite(out[[0, 2]]).all()
    assert torch.isnan(weights[1]).all()


def test_kv_cache_causal_mask_matches_sdpa_bottom_right_alignment():
    from torch.nn.attention.bias import causal_lower_right

    n, m = 3, 7
    q = torch.randn(1, n, 4, dtype=torch.float64)
    k = torch.randn(1, m, 4, dtype=torch.float64)
    v = torch.randn(1, m, 4, dtype=torch.float64)
    out, _ = reference.attention(q, k, v, reference.causal_mask(n, m))
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(n, m))
    torch.testing.assert_close(out, expected)


def test_multi_head_matches_torch_multihead_attention():
    d_model, heads = 12, 3
    torch.manual_seed(0)
    module = torch.nn.MultiheadAttention(d_model, heads, batch_first=True, dtype=torch.float64)
    weight_q, weight_k, weight_v = module.in_proj_weight.detach().chunk(3)
    bias_q, bias_k, bias_v = module.in_proj_bias.detach().chunk(3)
    params = {"W_q.weight": weight_q, "W_q.bias": bias_q, "W_k.weight": weight_k, "W_k.bias": bias_k,
              "W_v.weight": weight_v, "W_v.bias": bias_v, "W_o.weight": module.out_proj.weight.detach(),
              "W_o.bias": module.out_proj.bias.detach()}
    query, memory = torch.randn(2, 4, d_model, dtype=torch.float64), torch.randn(2, 6, d_model, dtype=torch.float64)
    out, weights = reference.multi_head_attention(query, memory, memory, params, heads)
    expected, expected_weights = module(query, memory, memory, average_attn_weights=False)
    torch.testing.assert_close(out, expected.detach())
    torch.testing.assert_close(weights, expected_weights.detach())


@pytest.mark.parametrize("n_heads, n_kv_heads", [(4, 2), (6, 3), (4, 1), (4, 4)])
def test_gqa_matches_sdpa_enable_gqa(n_heads, n_kv_heads):
    d_model, d_head = 4 * n_heads, 4
    generator = torch.Generator().manual_seed(n_heads * 10 + n_kv_heads)
    params = {
        "W_q.weight": torch.randn(n_heads * d_head, d_model, generator=generator, dtype=torch.float64),
        "W_k.weight": torch.randn(n_kv_heads * d_head, d_model, generator=generator, dtype=torch.float64),
        "W_v.weight": torch.randn(n_kv_heads * d_head, d_model, generator=generator, dtype=torch.float64),
        "W_o.weight": torch.randn(d_model, n_heads * d_head, generator=generator, dtype=torch.float64),
    }
    x = torch.randn(2, 5, d_model, generator=generator, dtype=torch.float64) / math.sqrt(d_model)
    out = reference.grouped_query_attention(x, params, n_heads, n_kv_heads, reference.causal_mask(5))
    q = reference.split_heads(reference.linear(x, params, "W_q"), n_heads)
    k = reference.split_heads(reference.linear(x, params, "W_k"), n_kv_heads)
    v = reference.split_heads(reference.linear(x, params, "W_v"), n_kv_heads)
    heads = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    torch.testing.assert_close(out, reference.linear(reference.merge_heads(heads), params, "W_o"))


def test_softmax_matches_torch():
    x = torch.randn(4, 5, 6, dtype=torch.float64) * 50
    for dim in (0, 1, -1):
        torch.testing.assert_close(reference.softmax(x, dim), torch.softmax(x, dim))


def test_padding_mask_shape_and_values():
    mask = reference.padding_mask(torch.tensor([2, 0, 3]), 3)
    assert mask.shape == (3, 1, 1, 3)
    assert mask.reshape(3, 3).tolist() == [[True, True, False], [False, False, False], [True, True, True]]


def test_after_the_warm_up_a_checks_first_gradient_imports_nothing():
    """The gradients checks' references are the grader's own autograd: the warm-up, run while the
    worker starts, leaves nothing (sympy, about 1 s) for the first one to import on its clock.
    In a fresh interpreter, where nothing else has imported it yet."""
    script = (
        "import sys, torch\n"
        "from quizprep.grader import reference\n"
        "reference.warm_up_gradients()\n"
        "before = set(sys.modules)\n"
        "q, k, v = (torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True) for _ in range(3))\n"
        "out, _ = reference.attention(q, k, v, reference.causal_mask(3))\n"
        "torch.autograd.grad(out, (q, k, v), torch.randn_like(out))\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
