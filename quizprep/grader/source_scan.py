"""What in a submission's source reaches for the routes the worker cannot close from inside.

The learner's process keeps ctypes (torch imports it), its memory map and Python's object graph:
a determined file can still bring a forbidden kernel's bytes into memory, call unexported code, or
copy PyTorch's own implementation from its sources. None of that is needed for any exercise, so a
file whose source names one of these is flagged for an instructor to read, whatever its verdict
(class tables, ``grade --json``). A flag is a reason to look, not a verdict.
"""
from __future__ import annotations

import ast
import sys
from typing import TypeGuard

DYNAMIC = "names looked up at run time (attrgetter, globals(), vars(), __dict__, import *, getattr of a computed name)"
# The import (or attribute path) that names a route, and what it reaches.
ROUTES = {
    "ctypes": "native code (ctypes)",
    "_ctypes": "native code (ctypes)",
    "cffi": "native code (cffi)",
    "mmap": "memory mapping (mmap)",
    "gc": "the object graph (gc)",
    "scipy": "SciPy",
    "torch._decomp": "torch._decomp",
    "torch._refs": "torch._refs",
    "torch._prims": "torch._prims",
    "torch._C": "torch._C",
    "sys._getframe": "frames (sys._getframe)",
    "inspect": "frames (inspect)",
    "importlib": "importlib",
    "torch.utils._python_dispatch": "dispatch modes (torch.utils._python_dispatch)",
    # The audits are dispatch modes, which see only the thread that calls the learner's code (fourth
    # red team: scores computed in a thread into memory touched at import passed flash's memory check).
    "threading": "threads (the grader's audits watch only the calling thread)",
    "_thread": "threads (the grader's audits watch only the calling thread)",
    "concurrent": "threads (the grader's audits watch only the calling thread)",
    "multiprocessing": "threads (the grader's audits watch only the calling thread)",
    # Names computed at run time hide every route above from this scan: sys.modules["c" + "types"]
    # reached ctypes and gc unflagged (third red team).
    "sys.modules": "modules looked up by name (sys.modules)",
    "builtins": "builtins",
    "__builtins__": "builtins",
    "exec": "code built at run time (exec, eval, compile, __import__)",
    "eval": "code built at run time (exec, eval, compile, __import__)",
    "compile": "code built at run time (exec, eval, compile, __import__)",
    "__import__": "code built at run time (exec, eval, compile, __import__)",
    # Names spelled inside strings or reached through a namespace are not names this scan reads:
    # attrgetter("onnx.ops.attention")(torch), vars(ops)["\\x61ttention"] and globals()["attention"]
    # after `from torch.onnx.ops import *` reached PyTorch's own attention unflagged (eighth red team).
    "operator.attrgetter": DYNAMIC,
    "operator.methodcaller": DYNAMIC,
    "globals": DYNAMIC,
    "vars": DYNAMIC,
    "locals": DYNAMIC,
}
# Attributes that are routes wherever they are read: a module run again from its source gets fresh
# copies of PyTorch's Python code that no guard has disarmed (fourth red team: quantizable MHA
# through its module's own __loader__.exec_module, which names no import machinery).
ATTRIBUTE_ROUTES = {
    **dict.fromkeys(("__loader__", "__spec__", "exec_module", "load_module", "get_code", "source_to_code"),
                    "modules run again from their source (__loader__, exec_module)"),
    "__dict__": DYNAMIC,
    "__code__": "function bodies copied (__code__)",
}
# The memory audit is a dispatch mode: torch reaches the mode stack from more modules than
# _python_dispatch (fifth red team: torch._higher_order_ops.cond._get_current_dispatch_mode, then
# the audit's counters restored around autograd).
DISPATCH_WORDS = ("dispatch_mode", "dispatch_stack", "_higher_order_ops")
# Any other private part of torch: its compiler, distributed and experimental modules hold attention
# written in Python that the guards do not know (sixth red team: Inductor's fusion pattern
# fuse_attention._sfdp_pattern_5 did kv_cache, paged_decode and sliding_window, unflagged).
PRIVATE_TORCH = "PyTorch's private modules (torch._inductor and the like, which hold attention code of their own)"
# Every exercise is written with torch or NumPy (and Triton); another package's attention (transformers,
# xformers, flash_attn...) is no one's own work, and the guards know only PyTorch's kernels.
OWN_PACKAGES = frozenset(("torch", "numpy", "triton", "einops"))
OTHER_PACKAGES = "packages beyond torch, NumPy and Triton (their attention is not yours)"
# PyTorch's own attention and softmax beyond the calls an exercise allows: torch.onnx.ops.attention (its
# eager reference path) did kv_cache, paged_decode and sliding_window, and distributions'
# SoftmaxTransform the softmax exercise (seventh red team); names are read through import aliases.
OWN_ATTENTION = "PyTorch's own attention or softmax code (torch.onnx.ops.attention, SoftmaxTransform...)"
ATTENTION_WORDS = ("attention", "attn", "softmax")
ALLOWED_SOFTMAX = frozenset(("torch.softmax", "torch.log_softmax", "torch.nn.functional.softmax",
                             "torch.nn.functional.log_softmax", "torch.special.softmax", "torch.special.log_softmax",
                             "torch.nn.Softmax", "torch.nn.LogSoftmax", "torch.Tensor.softmax"))
# Without a GPU the device check runs the code on meta tensors; code that asks for them answers that
# probe apart (sixth red team: an empty result for meta inputs, NumPy for the rest).
META = "the meta device (the device check's inputs) told apart: 'meta', .is_meta, or errors caught"
# Exceptions a file may catch with no such suspicion: an optional import.
IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")
# Bare names that are routes themselves (builtins); any other bare name is a variable's.
BARE_ROUTES = ("__builtins__", "exec", "eval", "compile", "__import__", "globals", "vars", "locals")
PROC_FILES = ("/proc/self/maps", "/proc/self/mem", "/proc/self/map_files", "/proc/self/pagemap")
# A kernel track's host code allocates and launches; attention's arithmetic belongs in the kernels.
# A file that computes it on the host and has a kernel carry the result, reading q, k and v besides
# so that the grader's load count is met, passes while interpreted (third and fourth red teams, with
# `@`, then with broadcast products and .sum()): named here. The correct files' host code calls
# none of these (empty, stride, cdiv, sqrt, log for lse).
HOST_ARITHMETIC = "attention arithmetic in the host code (the kernels should compute it)"
ARITHMETIC_CALLS = ("matmul", "bmm", "mm", "baddbmm", "addmm", "einsum", "tensordot", "dot", "inner", "linear",
                    "sum", "amax", "amin", "max", "mean", "logsumexp", "cumsum", "exp", "exp2", "softmax",
                    "log_softmax")


def reaches_around(source: str, host_entry_points: tuple[str, ...] = ()) -> list[str]:
    """The routes `source` names, in a fixed order; a file that does not parse names none (its
    verdict says why it failed). On a kernel track, whose `host_entry_points` launch its kernels,
    also attention arithmetic in what they run on the host."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: set[str] = {HOST_ARITHMETIC} if _host_arithmetic(tree, host_entry_points) else set()
    aliases = _aliases(tree)
    for node in ast.walk(tree):
        names = _names(node)
        for name in names:
            resolved = _resolved(name, aliases)  # `import torch.onnx.ops as o; o.attention`
            if _own_attention(resolved):
                found.add(OWN_ATTENTION)
            found.update(ROUTES[route] for route in _routes_of(name))
            found.update(ATTRIBUTE_ROUTES[part] for part in name.split(".")[1:] if part in ATTRIBUTE_ROUTES)
            if any(word in name for word in DISPATCH_WORDS):
                found.add(ROUTES["torch.utils._python_dispatch"])
            if _private_torch(resolved):
                found.add(PRIVATE_TORCH)
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(map(_other_package, names)):
            found.add(OTHER_PACKAGES)
        if _looks_up_at_run_time(node, aliases):
            found.add(DYNAMIC)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(f"{path} (read)" for path in PROC_FILES if path in node.value)
        if _tells_meta_apart(node):
            found.add(META)
    order = [*dict.fromkeys([*ROUTES.values(), *ATTRIBUTE_ROUTES.values()]), PRIVATE_TORCH, OTHER_PACKAGES,
             OWN_ATTENTION, META, *(f"{path} (read)" for path in PROC_FILES), HOST_ARITHMETIC]
    return [reason for reason in order if reason in found]


def _looks_up_at_run_time(node: ast.AST, aliases: dict[str, str]) -> bool:
    """`from m import *` (its names are unknown here), or getattr of a computed name on a module: one
    built from pieces, or any name on a module below a package's top (getattr(torch, dtype), for a
    dtype's size, is common in honest code; getattr(torch.onnx.ops, name) or getattr(torch, "on" + "nx")
    is not)."""
    if isinstance(node, ast.ImportFrom):
        return any(alias.name == "*" for alias in node.names)
    if not _is_getattr(node) or _quoted_name(node) is not None:
        return False
    owner = _owner(node)
    module = _resolved(owner, aliases) if owner else ""
    if module.split(".")[0] not in OWN_PACKAGES:
        return False
    return "." in module or not isinstance(node.args[1], (ast.Name, ast.Attribute, ast.Subscript))


def _is_getattr(node: ast.AST) -> TypeGuard[ast.Call]:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
        and len(node.args) >= 2


def _owner(node: ast.Call) -> str:
    """What getattr(x, ...) reads from, as a dotted name ("" when x is no name)."""
    owner = node.args[0]
    names = _names(owner) or ([owner.id] if isinstance(owner, ast.Name) else [])
    return names[0] if names else ""


def _quoted_name(node: ast.Call) -> str | None:
    """getattr(x, "name")'s name, when it is a literal."""
    name = node.args[1]
    return name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else None


def _tells_meta_apart(node: ast.AST) -> bool:
    """"meta", .is_meta, or an error caught (`try: q.flatten()[:1].item() except Exception:` answers a
    meta input apart); an optional import's ImportError is not one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split(":")[0] == "meta"
    if isinstance(node, ast.Attribute):
        return node.attr == "is_meta"
    if isinstance(node, ast.ExceptHandler):
        return not (isinstance(node.type, ast.Name) and node.type.id in IMPORT_ERRORS)
    return False


def _routes_of(name: str) -> list[str]:
    """The routes `name` is, or lies below (torch._C._dispatch below torch._C)."""
    return [route for route in ROUTES if name == route or name.startswith(route + ".")]


def _private_torch(name: str) -> bool:
    """torch.X._Y… that no route or dispatch word above names already; dunders (torch.__version__) are public."""
    parts = name.split(".")
    if parts[0] != "torch" or _routes_of(name) or any(word in name for word in DISPATCH_WORDS):
        return False
    return any(part.startswith("_") and not part.startswith("__") for part in parts[1:])


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Names that imports bind, and the dotted path each stands for (`import torch.onnx.ops as o`)."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update({alias.asname: alias.name for alias in node.names if alias.asname})
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.update({alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names})
    return found


def _resolved(name: str, aliases: dict[str, str]) -> str:
    root, _, rest = name.partition(".")
    return f"{aliases[root]}.{rest}".rstrip(".") if root in aliases else name


def _own_attention(name: str) -> bool:
    """A public path of torch's (private ones are routes of their own above) that names attention or a
    softmax the exercises do not list as allowed."""
    parts = name.split(".")
    if parts[0] != "torch" or name in ALLOWED_SOFTMAX or any(part.startswith("_") for part in parts):
        return False
    return any(word in part.lower() for part in parts[1:] for word in ATTENTION_WORDS)


def _other_package(name: str) -> bool:
    """A module from neither the standard library nor the exercises' own packages, nor a route above."""
    top = name.split(".")[0]
    return bool(top) and top not in OWN_PACKAGES and top not in sys.stdlib_module_names and top not in ROUTES


def _names(node: ast.AST) -> list[str]:
    """Dotted names an import or an attribute chain spells (``torch._C._dispatch`` -> itself)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    if isinstance(node, ast.Attribute):
        parts = []
        current: ast.AST = node
        while isinstance(current, ast.Attribute):
            parts.append(current.attr)
            current = current.value
        if isinstance(current, ast.Name):
            return [".".join([current.id, *reversed(parts)])]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__" \
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return [node.args[0].value]
    if _is_getattr(node) and (quoted := _quoted_name(node)) is not None:
        owner = _owner(node)
        return [f"{owner}.{quoted}"] if owner else []  # getattr(torch.onnx.ops, "attention")
    if isinstance(node, ast.Name) and node.id in BARE_ROUTES:
        return [node.id]
    return []


def _host_arithmetic(tree: ast.Module, entry_points: tuple[str, ...]) -> bool:
    """Whether code the entry points can run on the host (themselves, and what they name of the module's
    functions, classes and values, transitively; kernels excluded) multiplies matrices or reduces
    and exponentiates tensors: `@`, or a method or function of ARITHMETIC_CALLS (Python's own
    sum and max, called by bare name, are arithmetic on numbers). A test harness that nothing the
    entry points name reaches is not their host code."""
    defined = _module_names(tree) if entry_points else {}
    seen: set[str] = set()
    todo = [name for name in entry_points if name in defined]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for node in (inner for part in defined[name] for inner in ast.walk(part)):
            if _is_arithmetic(node):
                return True
            if isinstance(node, ast.Name) and node.id in defined:
                todo.append(node.id)
    return False


def _is_arithmetic(node: ast.AST) -> bool:
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.MatMult):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ARITHMETIC_CALLS


def _module_names(tree: ast.Module) -> dict[str, list[ast.AST]]:
    """The module's top-level names that host code can reach, with what defines each (kernels left out)."""
    defined: dict[str, list[ast.AST]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not any(_is_kernel(d) for d in node.decorator_list):
                defined.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        defined.setdefault(name.id, []).append(node.value)
    return defined


def _is_kernel(decorator: ast.expr) -> bool:
    """@triton.jit, @jit, @triton.autotune(...) and @triton.heuristics(...) mark kernel code."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    names = _names(target) or ([target.id] if isinstance(target, ast.Name) else [])
    return bool(names) and names[0].rsplit(".", 1)[-1] in ("jit", "autotune", "heuristics")
