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


def reaches_around(source: str) -> list[str]:
    """The routes `source` names, in a fixed order; a file that does not parse names none (its
    verdict says why it failed)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: set[str] = set()
    for node in ast.walk(tree):
        for name in _names(node):
            found.update(reason for route, reason in ROUTES.items() if name == route or name.startswith(route + "."))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(f"{path} (read)" for path in PROC_FILES if path in node.value)
    order = [*dict.fromkeys(ROUTES.values()), *(f"{path} (read)" for path in PROC_FILES)]
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
