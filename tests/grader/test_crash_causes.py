"""Issue 20: every crash in learner code gets a cause read from its message and the learner's line,
and every cause names only what the line and the message show."""
from __future__ import annotations

import pytest

from quizprep.grader.crashes import crash_diagnosis
from quizprep.grader.output import Frame


def frames(code: str, file: str = "/nonexistent/learner.py") -> list[Frame]:
    return [Frame(file, 12, "forward", code)]


@pytest.mark.parametrize("message, code, cause, says", [
    ("raised RuntimeError: value cannot be converted to type float without overflow",
     "m_i = torch.full(shape, torch.finfo(torch.float64).min, dtype=torch.float32)", "fill-overflow",
     ("torch.finfo(torch.float64).min", "float32")),
    ("raised RuntimeError: value cannot be converted to type c10::Half without overflow",
     "scores = scores.masked_fill(~mask, -1e9)", "fill-overflow", ("-1e9", "float16", "65504")),
    ("raised RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 0 but got size 3 for "
     "tensor number 1 in the list.", "return torch.cat([cache_k, k], dim=1), torch.cat([cache_v, v], dim=1)",
     "cat-wrong-axis", ("dim 1", "0 vs 3")),
    ("raised RuntimeError: Sizes of tensors must match except in dimension 2. Expected size 2 but got size 4 for "
     "tensor number 1 in the list.", "return torch.cat((cache_k, k), dim=2), torch.cat((cache_v, v), dim=2)",
     "kv-cache-expanded", ("dim 2, the positions", "4 where the cache has 2", "repeat_interleave")),
    ("raised AxisError: axis 3 is out of bounds for array of dimension 3", "m = np.max(x, axis=3, keepdims=True)",
     "hard-coded-axis", ("axis 3", "3 dimension")),
    ("raised IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)",
     "shifted = x - x.amax(dim=1, keepdim=True)", "hard-coded-axis", ("axis 1", "1 dimension")),
    ("raised IndexError: tuple index out of range", "d = q.shape[3]", "hard-coded-axis", ("axis 3",)),
    ("raised ValueError: axes don't match array",  # tinygrad-style NumPy attention (issue 31)
     "scores = np.matmul(q, k.transpose(0, 1, 3, 2)) / np.sqrt(q.shape[-1])", "hard-coded-axis",
     ("`transpose(0, 1, 3, 2)` names 4 axes", "np.swapaxes(k, -1, -2)")),
    ("raised RuntimeError: permute(sparse_coo): number of dimensions in the tensor input does not match the length "
     "of the desired ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 4",
     "kt = k.permute(0, 1, 3, 2)", "hard-coded-axis", ("names 4 axes",)),
    ("raised ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
     "(n?,k),(k,m?)->(n?,m?) (size 6 is different from 8)", "scores = q @ k.T / np.sqrt(q.shape[-1])",
     "transpose-all-axes", ("`.T`", "swapaxes")),
    ("raised RuntimeError: view size is not compatible with input tensor's size and stride (at least one dimension "
     "spans across two contiguous subspaces). Use .reshape(...) instead.", "qf = q.view(-1, n, d)",
     "view-non-contiguous", (".reshape", "transposed or expanded")),
    ("raised RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x16 and 8x16)",
     "key = (x @ W_k).view(b, t, g, d)",
     "weight-transposed", ("16 columns", "8 rows", "W.T")),
    ("raised RuntimeError: expected m1 and m2 to have the same dtype, but got: float != double",
     "out = torch.matmul(probs, v)", "dtype-mixed", ("`probs` and `v`", "float32 and float64", ".to(v.dtype)")),
    ("raised RuntimeError: expected scalar type Float but found Half", "return weights @ v, weights",
     "dtype-mixed", ("`weights` and `v`", "float32 and float16")),
    ("raised ValueError: operands could not be broadcast together with shapes (5,7) (5,) ",
     "e = np.exp(x - np.max(x, axis=-1))", "no-keepdim", ("`np.max(x, axis=-1)`", "`x`", "keepdims=True")),
    ("raised RuntimeError: The size of tensor a (7) must match the size of tensor b (5) at non-singleton dimension 1",
     "return e / e.sum(-1)", "no-keepdim", ("`e.sum(-1)`", "keepdim=True")),
    ("raised RuntimeError: The size of tensor a (7) must match the size of tensor b (5) at non-singleton dimension 1",
     "shifted = scores - scores.max(dim=-1).values", "no-keepdim", ("`scores.max(dim=-1)`",)),
])
def test_a_crash_gets_its_cause(message, code, cause, says):
    found = crash_diagnosis(message, frames(code))
    assert found is not None and found.id == cause, found
    assert found.hint and found.quiz
    for words in says:
        assert words in found.title + found.hint, (words, found.title)


def test_a_hard_coded_cuda_on_a_machine_without_cuda_is_the_device_bug():
    found = crash_diagnosis("raised AssertionError: Torch not compiled with CUDA enabled",
                            frames("baddbmm_input = torch.empty(b, n, m, dtype=q.dtype).cuda()"))
    assert found is not None and found.id == "device-hard-coded-cuda", found


def test_a_mask_given_an_axis_of_its_own_is_named_from_the_learners_line(tmp_path):
    learner = tmp_path / "mha.py"
    learner.write_text("def forward(scores, mask):\n    mask = mask.unsqueeze(1)  # [B, 1, 1, T_values]\n"
                       "    return scores.masked_fill(~mask, -1e18)\n")
    message = ("raised RuntimeError: The size of tensor a (5) must match the size of tensor b (3) at non-singleton "
               "dimension 1")
    found = crash_diagnosis(message, frames("scores = scores.masked_fill(~mask, -1e18)", str(learner)))
    assert found is not None and found.id == "mask-extra-axis", found
    assert "`mask = mask.unsqueeze(1)" in found.title and found.hint and found.quiz
    learner.write_text("def forward(scores, mask):\n    return scores.masked_fill(~mask, -1e18)\n")
    plain = crash_diagnosis(message, frames("scores = scores.masked_fill(~mask, -1e18)", str(learner)))
    assert plain is not None and not plain.id  # without the added axis: where the shapes part, no name


def test_an_in_place_write_to_an_input_is_named_as_the_no_mutation_check_names_it():
    found = crash_diagnosis("raised RuntimeError: a leaf Variable that requires grad is being used in an in-place "
                            "operation.", frames("x -= x.max(dim=dim, keepdim=True).values"))
    assert found.id == "input-modified-in-place" and "`x -= x.max(dim=dim, keepdim=True).values`" in found.title
    assert "x = x - m" in found.hint


def test_unexpanded_kv_heads_are_traced_to_the_repeat_in_the_file(tmp_path):
    learner = tmp_path / "gqa.py"
    learner.write_text("xk = torch.repeat_interleave(xk, n_rep, dim=2)\n"
                       "scores = torch.matmul(xq, xk.transpose(2, 3))\n")
    message = "raised RuntimeError: The size of tensor a (4) must match the size of tensor b (2) at non-singleton " \
              "dimension 1"
    found = crash_diagnosis(message, frames("scores = torch.matmul(xq, xk.transpose(2, 3))", str(learner)))
    assert found.id == "repeat-wrong-axis" and "4 heads" in found.title and "2 on the other" in found.title
    learner.write_text("scores = torch.matmul(xq, xk.transpose(2, 3))\n")  # nothing expanded: no such claim
    found = crash_diagnosis(message, frames("scores = torch.matmul(xq, xk.transpose(2, 3))", str(learner)))
    assert found.id == "" and "`xq`" in found.title and "`xk.transpose(2, 3)`" in found.title


def test_a_bare_broadcast_error_names_the_operands_and_axis_of_the_line():
    message = "raised RuntimeError: The size of tensor a (5) must match the size of tensor b (3) at non-singleton " \
              "dimension 2"
    found = crash_diagnosis(message, frames("out = weights @ values"), "boolean masks of shape (B, 1, 1, m)")
    assert found.id == ""  # where shapes part is no named mistake: a named one elsewhere stays the only name
    assert "axis 2 of `weights` has 5 and of `values` 3" in found.title
    assert "(B, 1, 1, m)" in found.hint
    masked = crash_diagnosis(message, frames("scores = scores.masked_fill(mask == 0, float('-inf'))"))
    assert "`scores` and `mask == 0` differ on axis 2 (5 vs 3)" in masked.title


def test_a_reduction_that_keeps_its_axis_or_has_none_is_not_blamed():
    message = "raised ValueError: operands could not be broadcast together with shapes (5,7) (3,7) "
    for code in ("e = np.exp(x - np.max(x, axis=-1, keepdims=True))", "y = x - x.max()", "y = x - np.max(x)",
                 "y = x.sum(-1, keepdim=True) * w"):
        found = crash_diagnosis(message, frames(code))
        assert found is not None and found.id == "", (code, found)


def test_a_weight_that_is_merely_wrong_sized_is_not_called_transposed():
    message = "raised RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x16 and 12x8)"
    found = crash_diagnosis(message, frames("y = x @ W"))
    assert found is not None and found.id != "weight-transposed"


def test_an_unknown_exception_gets_no_invented_cause():
    assert crash_diagnosis("raised KeyError: 'W_q'", frames("w = params['W_q']")) is None


def test_a_refused_thread_names_the_thread_limit():
    """Seen on a GPU machine running as root: the container refused thread 4,000 before the grader's
    poll stopped the worker (RLIMIT_NPROC does not bind root)."""
    found = crash_diagnosis("raised RuntimeError: can't start new thread",
                            frames("threading.Thread(target=time.sleep, args=(60,), daemon=True).start()"))
    assert found is not None and "too many threads" in found.title and "PyTorch" in found.hint


def test_a_cached_step_whose_causal_mask_has_no_cache_columns_is_named_from_the_learners_mask(tmp_path):
    from quizprep.grader.exercises.kv_cache import SPEC

    learner = tmp_path / "kv_cache.py"
    learner.write_text("def decode_step(scores, seqlen):\n"
                       "    mask = torch.full((seqlen, seqlen), float('-inf'))\n"
                       "    mask = torch.triu(mask, diagonal=1)\n"
                       "    scores = scores + mask\n")
    message = ("raised RuntimeError: The size of tensor a (7) must match the size of tensor b (3) at non-singleton "
               "dimension 3")
    found = crash_diagnosis(message, frames("scores = scores + mask", str(learner)), own_rules=SPEC.crash_causes)
    assert found is not None and found.id == "kv-mask-no-offset", found
    assert "`mask = torch.full((seqlen, seqlen), float('-inf'))`" in found.title
    assert "3 new tokens" in found.title and "7 keys" in found.title and found.hint and found.quiz
    # The same crash between two tensors that are not masks is not this mistake.
    other = crash_diagnosis(message, frames("out = weights @ values", str(learner)), own_rules=SPEC.crash_causes)
    assert other is None or other.id != "kv-mask-no-offset"
    # Outside the KV-cache exercise the rule is not read.
    assert crash_diagnosis(message, frames("scores = scores + mask", str(learner))).id != "kv-mask-no-offset"
