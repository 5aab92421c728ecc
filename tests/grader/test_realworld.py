"""Code in the styles learners paste (nanoGPT, the Annotated Transformer, Llama, Hugging Face,
einsum, loops): every correct file passes, every buggy file fails with exactly its one name (a
check may fail unnamed, e.g. a shape error, but never under another name) and a hint.

`production/` was written alongside the grader's changes; `realworld/` and `realworld2/` were
written separately, without reading the grader, as held-out sets; `realworld3/` covers issue 20's
classes (crashes, probes, idioms of public code; see the READMEs); `realworld4/` is a fourth
held-out set, written before reading the grader's names; `realworld5/` a fifth, for the exercises
realworld4 leaves out (flash, online softmax, KV cache, sliding window, NumPy track, budget);
`realworld6/` a sixth, in styles none of them used; `realworld7/` a seventh, adapted from public
projects none of them drew on (issue 31), each source named in its header; `realworld8/` an eighth, from
public projects none of realworld1–7 drew on, graded before the grader's changes; `public/` public
projects' code adapted to the three newest exercises' contracts; `realworld9/` a ninth, for those three
exercises, from public projects neither `public/` nor realworld1–8 drew on; `realworld10/` a tenth, for
the six exercises with the thinnest corpora, from projects none of those drew on; `realworld11/` an eleventh,
for the same six, from projects none of realworld1–10 drew on (four expectations corrected after its first
grading, see its README); `realworld12/` a twelfth, for the seven core exercises, from projects none of
realworld1–11 drew on. All use the same header:
`# expect: pass` or `# expect: fail diagnosis=<id>`.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import HERE

EXPECT = re.compile(r"^# expect: (?:pass|fail diagnosis=(\S+))\s*$", re.MULTILINE)
CORPUS = [path for folder in ("production", "realworld", "realworld2", "realworld3", "realworld4",
                                           "realworld5", "realworld6", "realworld7", "realworld8", "realworld9",
                                           "realworld10", "realworld11", "realworld12", "public")
          for path in sorted((HERE / folder).glob("*.py"))]


def expected_diagnosis(path: Path) -> str | None:
    match = EXPECT.search(path.read_text())
    assert match, f"{path.name} has no '# expect:' line"
    return match.group(1)


def test_corpus_covers_every_production_style():
    names = " ".join(p.stem for p in CORPUS)
    for style in ("llama", "hf", "annotated", "nanogpt", "additive", "dropout"):
        assert style in names, style
    assert sum(expected_diagnosis(p) is None for p in CORPUS) >= 6
    assert sum(expected_diagnosis(p) is not None for p in CORPUS) >= 10


@pytest.mark.parametrize("path", CORPUS, ids=[f"{p.parent.name}/{p.stem}" for p in CORPUS])
def test_verdict_and_single_name(path: Path, grade_file):
    wanted = expected_diagnosis(path)
    report = grade_file(path)
    failing = [(c.id, c.diagnosis_id, c.message) for c in report.checks if c.status in {"fail", "error"}]
    if wanted is None:
        assert report.passed and not failing, failing
        return
    assert not report.passed
    assert not [c.id for c in report.checks if c.status == "error"], "internal grader error"
    named = {c.diagnosis_id for c in report.checks if c.status == "fail" and c.diagnosis_id}
    assert named == {wanted}, failing
    assert all(c.hint for c in report.checks if c.status == "fail"), failing


def test_third_corpus_covers_every_exercise_and_issue_20_class():
    from quizprep.grader.exercises import available

    files = sorted((HERE / "realworld3").glob("*.py"))
    # Exercises added after issue 20 have their corpus of public code in public/.
    exercises = {re.search(r"exercise=([\w-]+)", p.read_text()).group(1).replace("-", "_")
                 for p in files + sorted((HERE / "public").glob("*.py"))}
    # The Triton track's planted bugs are kernel edits of its example: tests/grader/triton_kernels.py.
    assert exercises == set(available()) - {"flash_triton"}
    named = {expected_diagnosis(p) for p in files}
    for cause in ("padding-width-from-lengths", "kv-chunk-ignores-cache", "fill-overflow", "cat-wrong-axis",
                  "repeat-wrong-axis", "transpose-all-axes", "hard-coded-axis", "weights-head-averaged",
                  "scale-one-side", "weight-transposed", "kept-dim", "causal-offset-sign", "weights-are-logits",
                  "causal-flops-no-diagonal", "softmax-all-axes"):
        assert cause in named, cause


def test_every_check_says_which_real_world_use_it_stands_for():
    import importlib

    from quizprep.grader.exercises import available, load_spec

    for name in available():
        usage = importlib.import_module(f"quizprep.grader.exercises.{name}").USAGE
        checks = {check.id for check in load_spec(name).checks}
        assert checks <= set(usage) and all(usage[c] for c in checks), (name, checks - set(usage))
