"""Causes for exceptions raised in the learner's code, read from the message and the learner's line.

A crash gives no outputs to compare, but its message names the sizes, axes and dtypes involved
and the learner's line names the tensors. Each rule reads one family of messages and returns a
:class:`~quizprep.grader.spec.Diagnosis` like a numeric mismatch's, naming only tensors that
appear in the failing line. A rule with a specific cause gives an id; one that can only say
where two shapes part (a bare broadcast error) gives a title but no id, so that a named mistake
elsewhere in the report stays the one name.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Callable

import torch

from quizprep.grader.device import placement
from quizprep.grader.kernel_crashes import block_pointers, kernel_out_of_bounds, missing_triton, stray_pointer
from quizprep.grader.lessons import lesson
from quizprep.grader.output import Frame
from quizprep.grader.submission_file import SOURCE_BYTES, source_text
from quizprep.grader.spec import Diagnosis

OVERFLOW = re.compile(r"value cannot be converted to type (\S+) without overflow")
DTYPES = {"float": torch.float32, "double": torch.float64, "c10::Half": torch.float16, "at::Half": torch.float16,
          "c10::BFloat16": torch.bfloat16, "at::BFloat16": torch.bfloat16}
FILL = re.compile(r"torch\.finfo\([^()]*\)\.(?:min|max)|np\.finfo\([^()]*\)\.(?:min|max)|-?\d+(?:\.\d*)?e[+-]?\d+|"
                  r"-?\d{5,}(?:\.\d*)?")
CAT = re.compile(r"Sizes of tensors must match except in dimension (-?\d+)\. Expected size (\d+) but got size (\d+)")
NUMPY_AXIS = re.compile(r"axis (-?\d+) is out of bounds for array of dimension (\d+)")
TORCH_AXIS = re.compile(r"Dimension out of range \(expected to be in range of \[(-?\d+), (-?\d+)\], but got (-?\d+)\)")
MATMUL = re.compile(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)")
NUMPY_MATMUL = re.compile(r"matmul: Input operand \d has a mismatch in its core dimension \d.*\(size (\d+) is "
                          r"different from (\d+)\)")
BROADCAST = re.compile(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton "
                       r"dimension (-?\d+)")
NUMPY_BROADCAST = re.compile(r"operands could not be broadcast together with (?:remapped )?shapes")
SHAPE_ERROR = re.compile(f"{BROADCAST.pattern}|{NUMPY_BROADCAST.pattern}|{NUMPY_MATMUL.pattern}|{MATMUL.pattern}|"
                         r"expanded size of the tensor|is not broadcastable|shape mismatch|invalid for input of size|"
                         r"shapes cannot be multiplied|Expected size for first two dimensions of batch2|"
                         r"size mismatch|cannot reshape array")
SHAPE_INDEX = re.compile(r"\.shape\[(-?\d+)\]")
FULL_TRANSPOSE = re.compile(r"\b\w+\.T\b")
# A permutation that names every axis from the front: it fits one rank only.
FIXED_PERMUTATION = re.compile(r"\.(?:transpose|permute)\(\s*\d+\s*(?:,\s*\d+\s*){2,}\)")
PERMUTATION_RANK = re.compile(r"axes don't match array|does not match the length of the desired ordering of dimensions")
# A mask given an axis of its own: `mask.unsqueeze(1)`, `mask[:, None]`.
EXTRA_AXIS = re.compile(r"\.unsqueeze\(|\[[^\]]*\bNone\b[^\]]*\]")
EXPANSION = re.compile(r"\brepeat_interleave\(|\.repeat\(|\.expand\(")
MIXED_DTYPES = re.compile(r"same dtype, but got: (\S+) != (\S+)|expected scalar type (\w+) but found (\w+)|"
                          r"scalar type (\w+) but got scalar type (\w+)|(?:to|must) have the same dtype(?!, but got)")

# A rule reads the message, the learner's failing line and the traceback's frames.
CrashRule = Callable[[str, str, list[Frame]], "Diagnosis | None"]

def crash_diagnosis(message: str, frames: list[Frame], mask_layout: str = "", *, source: Path | None = None,
                    own_rules: tuple[CrashRule, ...] = ()) -> Diagnosis | None:
    """The cause of an exception the learner's code raised, or None for one no rule reads; `source`
    is the learner's file, read where the message alone cannot tell two causes apart. `own_rules`,
    an exercise's own (spec.crash_causes), are read before the general ones."""
    code = frames[-1].code if frames else ""
    stray = stray_pointer(message, frames, source)
    if stray is not None:
        return stray
    for rule in own_rules + RULES:
        found = rule(message, code, frames)
        if found is not None:
            return found
    return _mask_extra_axis(message, code, frames, mask_layout) or _shape_mismatch(message, code, mask_layout)


def _thread_limit(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    """The machine refused a thread before the grader's poll saw too many (a pids limit of the
    container, or memory for their stacks): the same cause as a worker stopped for its threads."""
    if "can't start new thread" not in message:
        return None
    return Diagnosis("", "too many threads: the machine refused another one",
                     "Attention needs no threads of its own: PyTorch already parallelises each operation. The grader "
                     "stops a worker that starts more threads than it allows.", "")


def _overflow(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    match = OVERFLOW.search(message)
    if not match:
        return None
    dtype = DTYPES.get(match.group(1))
    name = str(dtype).removeprefix("torch.") if dtype else match.group(1)
    limit = f" (largest ≈ {torch.finfo(dtype).max:.5g})" if dtype else ""
    fill = FILL.search(code)
    what = f"the fill `{fill.group(0)}`" if fill else "a constant on this line"
    return Diagnosis("fill-overflow", f"{what} does not fit in {name}{limit}: a buffer or score tensor of that dtype "
                     "cannot hold it", "Use float('-inf') or torch.finfo(tensor.dtype).min of the tensor you fill: "
                     "a constant taken from a wider dtype (float64's finfo, -1e9 in float16) overflows the narrower "
                     "one.", lesson("masking-additive-constants"))


# The hint wherever `kv-cache-expanded` is named: from a crash here, from the cache's shape in
# the kv_cache exercise.
KV_CACHE_EXPANDED_HINT = ("Cache the G KV heads and expand (repeat_interleave) only for the attention itself: "
                          "storing H heads costs H/G times the memory GQA saves.")


def _cat_axis(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    match = CAT.search(message)
    if not match or "cat(" not in code:
        return None
    axis, first, second = match.groups()
    cached, new = int(first), int(second)
    if axis in ("2", "-2") and cached and new > cached and new % cached == 0:
        # Joined on the positions of (B, heads, T, d), the right axis: the pieces differ elsewhere,
        # and a whole multiple more in the new piece is H query heads against G cached ones.
        return Diagnosis("kv-cache-expanded", f"torch.cat joins along dim {axis}, the positions, but the new keys "
                         f"or values have {new} where the cache has {cached} on another axis: most often the heads, "
                         f"when K and V were expanded to the query heads before being cached",
                         KV_CACHE_EXPANDED_HINT, lesson("gqa-kv-cache-savings"))
    return Diagnosis("cat-wrong-axis", f"torch.cat joins along dim {axis}, but the pieces differ along another axis "
                     f"({first} vs {second} positions): that other axis is the one that grows",
                     "Concatenate the cache and the new keys/values on the sequence axis, dim=-2 of (B, G, T, d); "
                     "every other axis must already match.", lesson("kv-cache-prefill-vs-decode"))


def _hard_coded_axis(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    numpy, torch_axis = NUMPY_AXIS.search(message), TORCH_AXIS.search(message)
    index = SHAPE_INDEX.search(code) if "tuple index out of range" in message else None
    if numpy:
        axis, rank = numpy.group(1), f"{numpy.group(2)} dimension(s)"
    elif torch_axis:
        axis, rank = torch_axis.group(3), f"{int(torch_axis.group(2)) + 1} dimension(s)"
    elif index:
        axis, rank = index.group(1), "fewer dimensions"
    elif PERMUTATION_RANK.search(message) and (fixed := FIXED_PERMUTATION.search(code)):
        axes = fixed.group(0).count(",") + 1
        return Diagnosis("hard-coded-axis", f"`{fixed.group(0).lstrip('.')}` names {axes} axes from the front: it "
                         f"fits {axes}-D inputs only, and the contract allows any number of leading dimensions",
                         "Swap the last two axes only: np.swapaxes(k, -1, -2), or k.transpose(-2, -1) in torch.",
                         lesson("multihead-split-transpose"))
    else:
        return None
    return Diagnosis("hard-coded-axis", f"axis {axis} is hard-coded, but this input has {rank}: the "
                     "contract allows any number of leading dimensions", "Count axes from the end (-1 is the last, "
                     "-2 the one before) or use the dim argument you were given, never a fixed index from the front.",
                     lesson("softmax-axis"))


def _device(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    """A hard-coded .cuda() on a machine without CUDA crashes every check: the device bug, named here."""
    return placement(message, code)


def _mask_extra_axis(message: str, code: str, frames: list[Frame], mask_layout: str) -> Diagnosis | None:
    """A mask that does not broadcast because the learner's code gave it an axis of its own
    (OpenNMT's and the Annotated Transformer's `mask.unsqueeze(1)`, on a mask that has its head axis)."""
    operands = operands_of(code) if SHAPE_ERROR.search(message) else None
    if not operands:
        return None
    names = {node.id for operand in operands[:2] for node in ast.walk(_parsed(operand)) if isinstance(node, ast.Name)}
    for mask in sorted(name for name in names if "mask" in name.lower()):
        given = re.compile(rf"\b{re.escape(mask)}\s*=\s*{re.escape(mask)}\b[^\n]*")
        line = next((m.group(0) for m in given.finditer(source_of(frames)) if EXTRA_AXIS.search(m.group(0))), None)
        if line is not None:
            layout = f" The checks pass {mask_layout}." if mask_layout else ""
            return Diagnosis("mask-extra-axis", f"`{line.strip()}` gives the mask an axis of its own, but the mask "
                             "arrives already broadcastable to the scores (B, heads, n, m): the extra axis no longer "
                             "lines up", "Use the mask as given: masked_fill(~mask, ...) broadcasts it over the heads; "
                             "add an axis only to a mask that lacks the head axis." + layout,
                             lesson("masking-before-softmax"))
    return None


def _parsed(expression: str) -> ast.AST:
    try:
        return ast.parse(expression)
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


def _full_transpose(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    if not SHAPE_ERROR.search(message) or not FULL_TRANSPOSE.search(code):
        return None
    return Diagnosis("transpose-all-axes", "`.T` reverses every axis: on a batched (…, m, d) array it is not the "
                     "transpose of the last two", "Swap only the last two axes: np.swapaxes(k, -1, -2) or "
                     "k.transpose(-2, -1) (k.mT in torch).", lesson("multihead-split-transpose"))


def _view_of_a_view(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    if "view size is not compatible with input tensor's size and stride" not in message:
        return None
    return Diagnosis("view-non-contiguous", "`.view` needs memory laid out in order, and this tensor is a "
                     "transposed or expanded view (strides, not a copy)", "Use .reshape(...), which copies only "
                     "when it must, or .contiguous() before .view: inputs split into heads with .transpose or shared "
                     "with .expand arrive as views.", lesson("multihead-split-transpose"))


def in_place_write(title: str) -> Diagnosis:
    """An input written in place: the caller's tensor changes, and autograd refuses it on a leaf
    that requires grad. The same cause whether a check saw the input change or the call crashed."""
    return Diagnosis("input-modified-in-place", title,
                     "Write the result to a new tensor: x = x - m, not x -= m; x.exp(), not x.exp_(); "
                     "masked_fill, not masked_fill_. The caller's tensor is theirs to keep.", "")


def _in_place_on_input(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    if "leaf Variable that requires grad is being used in an in-place operation" not in message:
        return None
    return in_place_write(f"`{code}` writes into an input in place: autograd refuses it on a tensor that "
                          "requires grad, and it would change the caller's tensor")


def _mixed_dtypes(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    match = MIXED_DTYPES.search(message)
    if not match:
        return None
    names = [_dtype_name(g) for g in match.groups() if g]
    which = f" ({' and '.join(names)})" if names else ""
    operands = operands_of(code)
    what = f"`{operands[0]}` and `{operands[1]}`" if operands else "the operands on this line"
    return Diagnosis("dtype-mixed", f"{what} have different dtypes{which}: one was cast (a float32 softmax, "
                     ".float(), a dtype= argument) and not cast back", "Cast back before the next product: "
                     "weights.to(v.dtype) (or .type_as(v)) after a softmax run in float32. Every operand of a matmul "
                     "needs the same dtype, and the contract returns the input's.", lesson("numerics-fp32-softmax"))


def _dtype_name(name: str) -> str:
    dtype = DTYPES.get(name) or DTYPES.get(name.lower()) or DTYPES.get(f"c10::{name}")
    return str(dtype).removeprefix("torch.") if dtype else name


def _transposed_weight(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    match = MATMUL.search(message)
    if not match:
        return None
    _, inner, rows, cols = (int(g) for g in match.groups())
    if inner == rows or inner != cols:
        return None
    return Diagnosis("weight-transposed", f"the right operand is transposed: its {cols} columns match the left's "
                     f"{inner} features, its {rows} rows do not (x @ W where the layout needs x @ W.T)",
                     "nn.Linear stores weights as (out_features, in_features): multiply by W.T (GPT-2's Conv1D "
                     "stores (in, out), so code ported from it multiplies by W as is).",
                     lesson("multihead-output-projection"))


def _unexpanded_heads(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    match = BROADCAST.search(message)
    if not match or match.group(3) not in {"1", "-3"} or not EXPANSION.search(source_of(frames)):
        return None
    first, second = int(match.group(1)), int(match.group(2))
    if min(first, second) < 1 or max(first, second) % min(first, second):
        return None
    return Diagnosis("repeat-wrong-axis", f"at this line the head axis has {max(first, second)} heads on one side and "
                     f"{min(first, second)} on the other: the KV heads were expanded along another axis (the sequence "
                     "one, after the transpose)", "Expand the head axis: repeat_interleave(H // G, dim=1) on "
                     "(B, G, T, d), or dim=2 on (B, T, G, d) before the transpose.", lesson("gqa-head-mapping"))


REDUCTIONS = {"max", "amax", "min", "amin", "sum", "mean", "logsumexp", "nanmax", "nansum"}


def _reduction_without_keepdim(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    """`x - x.max(-1)` or `e / np.sum(e, axis=-1)`: the reduced axis is gone, so the result lines
    up with x's other axes (a broadcast error unless they happen to match in size)."""
    if not SHAPE_ERROR.search(message):
        return None
    try:
        tree = ast.parse(code.removeprefix("return ").strip())
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.BinOp):
            continue
        for side, other in ((node.right, node.left), (node.left, node.right)):
            call = _reduction_call(side)
            if call is not None:
                return Diagnosis("no-keepdim", f"`{ast.unparse(call)}` drops the reduced axis (no keepdims), so it "
                                 f"no longer lines up with `{ast.unparse(other)}`",
                                 "Keep the reduced axis so it broadcasts along it: keepdims=True in NumPy, "
                                 "keepdim=True in torch.", lesson("softmax-axis"))
    return None


def _reduction_call(node: ast.expr) -> ast.Call | None:
    """The reduction along an axis, without keepdim(s)=True, that `node` is (or whose .values or [0] it takes)."""
    if isinstance(node, ast.Attribute) and node.attr == "values":
        node = node.value
    if isinstance(node, ast.Subscript):
        node = node.value
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name not in REDUCTIONS:
        return None
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    kept = keywords.get("keepdims", keywords.get("keepdim"))
    if kept is not None and not (isinstance(kept, ast.Constant) and not kept.value):
        return None
    is_function = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
        func.value.id in {"np", "numpy", "torch"}
    has_axis = "axis" in keywords or "dim" in keywords or len(node.args) > (1 if is_function else 0)
    return node if has_axis else None


def _shape_mismatch(message: str, code: str, mask_layout: str) -> Diagnosis | None:
    if not SHAPE_ERROR.search(message):
        return None
    operands = operands_of(code)
    match = BROADCAST.search(message)
    if operands and match and operands[2]:  # in `a op b`, torch's "tensor a" is the left operand
        where = (f"axis {match.group(3)} of `{operands[0]}` has {match.group(1)} and of `{operands[1]}` "
                 f"{match.group(2)}")
    elif operands and match:
        where = f"`{operands[0]}` and `{operands[1]}` differ on axis {match.group(3)} ({match.group(1)} vs " \
                f"{match.group(2)})"
    else:
        where = f"`{operands[0]}` and `{operands[1]}` do not line up" if operands else "two operands do not line up"
    layout = f" The checks pass {mask_layout}; use them as given, without adding dimensions." if mask_layout else ""
    return Diagnosis("", f"at `{code}`: {where}",
                     "Print the shapes of the tensors on this line and trace which axis went astray." + layout, "")


def operands_of(code: str) -> tuple[str, str, bool] | None:
    """The two tensors of the first binary operation (True) or two-tensor call (False) on the line."""
    try:
        tree = ast.parse(code.removeprefix("return ").strip())
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            return ast.unparse(node.left), ast.unparse(node.right), True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            args = [ast.unparse(a) for a in node.args]
            if node.func.attr in {"matmul", "bmm", "where", "cat"} and len(args) >= 2:
                return args[-2], args[-1], False
            if node.func.attr in {"masked_fill", "masked_fill_"} and args:
                return ast.unparse(node.func.value), args[0], False
    return None


def source_of(frames: list[Frame]) -> str:
    """The learner's file, read where the traceback points (empty when it cannot be read)."""
    if not frames:
        return ""
    return source_text(frames[-1].file, SOURCE_BYTES)


RULES: tuple[CrashRule, ...] = (
    missing_triton, block_pointers, kernel_out_of_bounds, _thread_limit, _device, _overflow, _cat_axis,
    _hard_coded_axis, _full_transpose, _view_of_a_view, _in_place_on_input, _mixed_dtypes, _transposed_weight,
    _unexpanded_heads, _reduction_without_keepdim)
