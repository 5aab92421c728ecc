"""Issue 20: no internal errors. Generated slips of the example solutions (a wrong axis, a dropped
transpose, a wrong dtype or fill, a kept or added dimension) are graded, and every check ends in a
verdict about the learner's code: pass, fail or skip, never "internal grader error"."""
from __future__ import annotations

import re

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import SOLUTIONS

from quizprep.grader.exercises import load_spec

# (pattern, replacement): one-line slips real code makes, each applied at one occurrence.
SLIPS = (
    (r"dim=-1", "dim=1"), (r"dim=-1", "dim=0"), (r"dim=-1", "dim=-2"), (r"dim=-2", "dim=-1"),
    (r"axis=-1", "axis=1"), (r"transpose\(-2, -1\)", "transpose(0, 1)"), (r"transpose\(-2, -1\)", "T"),
    (r"transpose\(1, 2\)", "transpose(2, 3)"), (r"swapaxes\(([^,]+), -1, -2\)", r"swapaxes(\1, 0, 1)"),
    (r"keepdim=True", "keepdim=False"), (r"keepdims=True", "keepdims=False"), (r"float\(\"-inf\"\)", "-1e9"),
    (r"float\(\"-inf\"\)", "torch.finfo(torch.float64).min"), (r"\.float\(\)", ".half()"),
    (r"\.float\(\)", ".double()"), (r"repeat_interleave\(([^,]+), dim=1\)", r"repeat_interleave(\1, dim=2)"),
    (r"unsqueeze\(-1\)", "unsqueeze(1)"), (r"\.unsqueeze\(1\)", ""), (r"\breturn (\w+), ", r"return \1.unsqueeze(0), "),
)
EXERCISES = ("attention", "attention_numpy", "mha", "gqa", "softmax", "online_softmax", "kv_cache", "sliding_window",
             "flash")


@st.composite
def slipped_solution(draw) -> tuple[str, str]:
    name = draw(st.sampled_from(EXERCISES))
    source = (SOLUTIONS / f"{name}.py").read_text()
    pattern, replacement = draw(st.sampled_from(SLIPS))
    places = list(re.finditer(pattern, source))
    assume(places)
    place = places[draw(st.integers(0, len(places) - 1))]
    slipped = source[:place.start()] + place.expand(replacement) + source[place.end():]
    if replacement == "T":  # x.transpose(-2, -1) -> x.T
        slipped = source[:place.start() - 1] + ".T" + source[place.end():]
    return name, slipped


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=(HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much))
@given(slipped_solution())
def test_every_slip_gets_a_verdict_not_an_internal_error(grade_file, tmp_path, slipped):
    name, source = slipped
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    checks = tuple(check.id for check in load_spec(name).checks[:2])
    report = grade_file(path, only=checks, exercise=name)
    errors = [(c.id, c.message) for c in report.checks if c.status == "error"]
    assert not errors, (name, errors)
    for check in report.checks:
        assert check.status in {"pass", "fail", "skip"} and "internal grader error" not in check.message
        if check.status == "fail":
            assert check.diagnosis or check.hint, (check.id, check.message)
