"""What in a submission's source reaches for the routes the worker cannot close from inside.

The learner's process keeps ctypes (torch imports it), its memory map and Python's object graph:
a determined file can still bring a forbidden kernel's bytes into memory, call unexported code, or
copy PyTorch's own implementation from its sources. None of that is needed for any exercise, so a
file whose source names one of these is flagged for an instructor to read, whatever its verdict
(class tables, ``grade --json``). A flag is a reason to look, not a verdict.
"""
from __future__ import annotations

import ast

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
    # Names computed at run time hide every route above from this scan: sys.modules["c" + "types"]
    # reached ctypes and gc unflagged (third red team).
    "sys.modules": "modules looked up by name (sys.modules)",
    "builtins": "builtins",
    "__builtins__": "builtins",
    "exec": "code built at run time (exec, eval, compile, __import__)",
    "eval": "code built at run time (exec, eval, compile, __import__)",
    "compile": "code built at run time (exec, eval, compile, __import__)",
    "__import__": "code built at run time (exec, eval, compile, __import__)",
}
# Bare names that are routes themselves (builtins); any other bare name is a variable's.
BARE_ROUTES = ("__builtins__", "exec", "eval", "compile", "__import__")
PROC_FILES = ("/proc/self/maps", "/proc/self/mem", "/proc/self/map_files", "/proc/self/pagemap")
# A kernel track's host code allocates and launches; attention's products belong in the kernels. A
# file that computes them on the host and has a kernel carry the result, reading q, k and v besides
# so that the grader's load count is met, passes while interpreted (third red team): named here.
HOST_PRODUCTS = "matrix products in the host code (the kernels should compute them)"
PRODUCT_CALLS = ("matmul", "bmm", "mm", "baddbmm", "addmm", "einsum", "tensordot", "dot", "inner")
ENTRY_POINT = "flash_attention"


def reaches_around(source: str, kernel_track: bool = False) -> list[str]:
    """The routes `source` names, in a fixed order; a file that does not parse names none (its
    verdict says why it failed). On a kernel track, also products computed on the host."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: set[str] = {HOST_PRODUCTS} if kernel_track and _host_products(tree) else set()
    for node in ast.walk(tree):
        for name in _names(node):
            found.update(reason for route, reason in ROUTES.items() if name == route or name.startswith(route + "."))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(f"{path} (read)" for path in PROC_FILES if path in node.value)
    order = [*dict.fromkeys(ROUTES.values()), *(f"{path} (read)" for path in PROC_FILES), HOST_PRODUCTS]
    return [reason for reason in order if reason in found]


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
    if isinstance(node, ast.Name) and node.id in BARE_ROUTES:
        return [node.id]
    return []


def _host_products(tree: ast.Module) -> bool:
    """Whether a function the entry point runs on the host (itself, or a module-level function it
    calls by name, transitively; kernels excluded) multiplies matrices: `@` or a product call. A
    test harness that the entry point never calls is not its host code."""
    host = {node.name: node for node in tree.body
            if isinstance(node, ast.FunctionDef) and not any(_is_kernel(d) for d in node.decorator_list)}
    seen: set[str] = set()
    todo = [ENTRY_POINT] if ENTRY_POINT in host else []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for node in ast.walk(host[name]):
            if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.MatMult):
                return True
            if isinstance(node, ast.Call):
                called = _names(node.func) or ([node.func.id] if isinstance(node.func, ast.Name) else [])
                last = called[0].rsplit(".", 1)[-1] if called else ""
                if last in PRODUCT_CALLS:
                    return True
                if last in host and "." not in called[0]:
                    todo.append(last)
    return False


def _is_kernel(decorator: ast.expr) -> bool:
    """@triton.jit, @jit, @triton.autotune(...) and @triton.heuristics(...) mark kernel code."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    names = _names(target) or ([target.id] if isinstance(target, ast.Name) else [])
    return bool(names) and names[0].rsplit(".", 1)[-1] in ("jit", "autotune", "heuristics")
