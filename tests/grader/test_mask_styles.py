"""Every way a correct learner may apply a mask passes, and the same code with the mask inverted
is named `mask-inverted` on every mask check, causal ones included (where the inverted mask
leaves a row with no visible key, which -inf turns into NaN and -1e9 into a uniform average)."""
from __future__ import annotations

from pathlib import Path

import pytest

TEMPLATE = '''
import math
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        hidden = {hidden}
        {apply}
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
'''
STYLES = {
    "-inf": "scores = scores.masked_fill(hidden, float('-inf'))",
    "finfo.min": "scores = scores.masked_fill(hidden, torch.finfo(scores.dtype).min)",
    "-1e9 (-1e4 in float16)": "scores = scores.masked_fill(hidden, -1e4 if scores.dtype == torch.float16 else -1e9)",
    "additive float mask": "scores = scores + torch.zeros_like(scores).masked_fill(hidden, "
                           "torch.finfo(scores.dtype).min)",
    "torch.where": "scores = torch.where(hidden, torch.full_like(scores, float('-inf')), scores)",
}
MASK_CHECKS = ("mask-causal", "mask-kv-cache", "mask-padding", "mask-arbitrary", "mask-empty-row", "dtypes")


def _write(tmp_path: Path, style: str, inverted: bool) -> Path:
    hidden = "mask" if inverted else "~mask"
    path = tmp_path / "attention.py"
    path.write_text(TEMPLATE.format(hidden=hidden, apply=STYLES[style]))
    return path


@pytest.mark.parametrize("style", sorted(STYLES))
def test_correct_masking_passes_in_every_style(style, tmp_path, grade_file):
    report = grade_file(_write(tmp_path, style, inverted=False), only=MASK_CHECKS)
    assert report.passed, [(c.id, c.message, c.where) for c in report.checks if c.status != "pass"]


@pytest.mark.parametrize("style", sorted(STYLES))
def test_inverted_mask_is_named_in_every_style(style, tmp_path, grade_file):
    report = grade_file(_write(tmp_path, style, inverted=True), only=MASK_CHECKS[:5])
    failed = [c for c in report.checks if c.id != "load"]
    assert all(c.status == "fail" for c in failed), [(c.id, c.status) for c in failed]
    assert {c.diagnosis_id for c in failed} == {"mask-inverted"}, [(c.id, c.diagnosis) for c in failed]
