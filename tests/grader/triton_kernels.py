"""The Triton track's kernel catalogue as edits of the example solution (tests/solutions/flash_triton.py):
each planted bug with the check that must fail and the one name it must get, and correct kernels in
other styles. The edit's first changed line is the line the bug happens on.

Used by tests/grader/test_flash_triton.py and benchmarks/grader_corpus.py."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SOLUTION = Path(__file__).resolve().parents[1] / "solutions" / "flash_triton.py"
LOOP_END = "end = tl.minimum((start_m + 1) * BLOCK_M, N) if CAUSAL else N"
CAUSAL_MASK = 's = tl.where(cols[None, :] <= offs_m[:, None], s, float("-inf"))'
V_TILE = """        v = tl.load(V + b * svb + h * svh + cols[:, None] * svn + offs_d[None, :] * svd,
                    mask=cols[:, None] < N, other=0.0)
"""


@dataclass(frozen=True)
class KernelEdit:
    name: str
    check: str
    diagnosis: str  # "" for a correct kernel
    edits: tuple[tuple[str, str], ...]  # (text of the base kernel, what it becomes)
    base: Path = SOLUTION

    def source(self) -> str:
        text = self.base.read_text()
        for old, new in self.edits:
            assert text.count(old) == 1, f"{self.name}: {old!r} is not once in {self.base.name}"
            text = text.replace(old, new)
        return text

    def line(self) -> tuple[int, str]:
        """Where the first edit happens in the edited kernel: its line number and text (for a
        deletion, the line that now stands there and what was removed)."""
        old, new = self.edits[0]
        base = self.base.read_text()
        number = base[: base.index(old) + len(old) - len(old.lstrip())].count("\n") + 1
        text = self.source().splitlines()[number - 1].strip()
        return number, text if new else f"{text}  (removed above it: {old.strip().splitlines()[-1].strip()})"


def fails_with_its_name(grade_kernel, bug: KernelEdit, folder: Path):
    """Grade `bug`'s check alone (the interpreter is slow); it must fail with exactly its one name,
    a hint and a question. Returns the check's result."""
    path = folder / f"flash_triton_{bug.name}.py"
    path.write_text(bug.source())
    result = next(c for c in grade_kernel(path, only=(bug.check,)).checks if c.id == bug.check)
    assert result.status == "fail", result.message
    assert result.diagnosis_id == bug.diagnosis, f"{result.diagnosis!r}\n{result.where}\n{result.smallest}"
    assert result.hint and result.quiz
    return result


def edit(base: Path, name: str, check: str, diagnosis: str, *edits: tuple[str, str]) -> KernelEdit:
    """A slip planted in a kernel other than the example solution."""
    return KernelEdit(name, check, diagnosis, edits, base)


BUGS = (
    KernelEdit("no_rescale", "forward", "triton-no-rescale", (
        ("acc = acc * alpha[:, None] + tl.dot(", "acc = acc + tl.dot("),
    )),
    KernelEdit("no_max_shift", "stability", "no-max-shift", (
        ("m_new = tl.maximum(m_i, tl.max(s, 1))", "m_new = tl.zeros([BLOCK_M], tl.float32)"),
    )),
    KernelEdit("causal_stops_early", "causal", "triton-causal-loop-bound", (
        (LOOP_END, "end = start_m * BLOCK_M if CAUSAL else N"),
    )),
    KernelEdit("causal_one_past", "causal", "triton-causal-loop-bound", (
        (LOOP_END, "end = tl.minimum((start_m + 2) * BLOCK_M, N) if CAUSAL else N"),
        (CAUSAL_MASK, CAUSAL_MASK.replace("cols[None, :] <= offs_m[:, None]",  # masks the diagonal block only
                                          "(cols[None, :] <= offs_m[:, None]) | (start_n != start_m * BLOCK_M)")),
    )),
    KernelEdit("diagonal_unmasked", "causal", "triton-diagonal-unmasked", (
        (f"        if CAUSAL:\n            {CAUSAL_MASK}\n", ""),
    )),
    KernelEdit("ragged_edge", "forward", "triton-ragged-edge", (
        ('        s = tl.where(cols[None, :] < N, s, float("-inf"))\n', ""),
    )),
    KernelEdit("contiguous_strides", "strides", "triton-wrong-strides", (
        ("*q.stride(), *k.stride(), *v.stride(), *out.stride()",
         "*out.stride(), *out.stride(), *out.stride(), *out.stride()"),
    )),
    KernelEdit("half_dot", "forward", "triton-half-dot", (
        ("tl.dot(p.to(v.dtype), v, input_precision=PRECISION)",
         "tl.dot(p.to(tl.float16), v.to(tl.float16), out_dtype=tl.float16)"),
    )),
    KernelEdit("divide_in_loop", "forward", "triton-divide-in-loop", (
        ("    acc = acc / l_i[:, None]\n", "        acc = acc / l_i[:, None]\n"),
    )),
    KernelEdit("wrong_lse", "forward", "triton-wrong-lse", (
        ("m_i + tl.log(l_i)", "tl.log(l_i)"),
    )),
    KernelEdit("store_drops_last_row", "forward", "triton-unwritten-output", (  # out's last row never stored
        ("acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N)",
         "acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N - 1)"),
    )),
)

# Correct kernels in other styles (a third, with tensor descriptors, is triton_variants/).
STYLES = (
    KernelEdit("exp2", "", "", (  # log2(e) folded into the scale; 32-row query tiles
        ("BLOCK_M, BLOCK_N = 16, 16", "BLOCK_M, BLOCK_N = 32, 16"),
        ("s = tl.dot(q, k, input_precision=PRECISION) * scale",
         "s = tl.dot(q, k, input_precision=PRECISION) * (scale * 1.4426950408889634)"),
        ("alpha = tl.exp(m_i - m_new)", "alpha = tl.exp2(m_i - m_new)"),
        ("p = tl.exp(s - m_new[:, None])", "p = tl.exp2(s - m_new[:, None])"),
        ("m_i + tl.log(l_i)", "(m_i + tl.log2(l_i)) * 0.6931471805599453"),
    )),
    KernelEdit("two_pass", "", "", (  # the row max and sum first, then the normalised output
        (V_TILE + """        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m_i = m_new
    acc = acc / l_i[:, None]
""", """        m_i = m_new
    for start_n in range(0, end, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + b * skb + h * skh + cols[None, :] * skn + offs_d[:, None] * skd,
                    mask=cols[None, :] < N, other=0.0)
        s = tl.where(cols[None, :] < N, tl.dot(q, k, input_precision=PRECISION) * scale, float("-inf"))
        if CAUSAL:
            """ + CAUSAL_MASK + """
        p = tl.exp(s - m_i[:, None]) / l_i[:, None]
""" + V_TILE + """        acc += tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
"""),
    )),
)
