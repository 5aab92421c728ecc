"""The float64 reference engine agrees with torch's SDPA on many shapes and masks."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

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


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), seed=st.integers(0, 2**16),
       special=st.sampled_from([None, float("inf"), float("nan"), 0.0]))
def test_gradients_are_autograds_with_that_output_gradient_bit_for_bit(shape, seed, special):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=generator, dtype=torch.float64, requires_grad=True)
    w = torch.randn(shape[-1], 3, generator=generator, dtype=torch.float64, requires_grad=True)
    out = torch.softmax(x, -1) @ w
    grad_out = torch.randn(out.shape, generator=generator, dtype=torch.float64) * 1e3
    if special is not None:
        grad_out.view(-1)[0] = special
    expected = torch.autograd.grad(out, (x, w), grad_out, retain_graph=True)
    got = reference.gradients(out, (x, w), grad_out)
    assert all(torch.allclose(a, b, rtol=0, atol=0, equal_nan=True) for a, b in zip(got, expected))


def test_gradients_refuse_an_output_gradient_of_another_shape():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    with pytest.raises(ValueError, match="not the output's"):
        reference.gradients(x * 2, [x], torch.ones(4, dtype=torch.float64))


def test_the_grader_takes_its_reference_gradients_without_importing_sympy():
    """The gradients checks' references are the grader's own autograd: graded in a fresh
    interpreter, they leave torch's symbolic shapes and sympy unimported (a second of CPU)."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from quizprep.grader.grade import GradeOptions, grade\n"
        "for name in ('softmax', 'attention', 'mha', 'gqa'):\n"
        "    report = grade(Path('tests/solutions') / f'{name}.py', GradeOptions(seed=1, only=('gradients',)))\n"
        "    print(name, [(check.id, check.status.value) for check in report.checks])\n"
        "print(sorted(name for name in sys.modules if name == 'sympy' or 'symbolic_shapes' in name))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                          cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr
    *graded, imported = done.stdout.strip().splitlines()
    assert [line.split()[0] for line in graded] == ["softmax", "attention", "mha", "gqa"]
    assert all("('gradients', 'pass')" in line for line in graded), graded
    assert imported == "[]"
