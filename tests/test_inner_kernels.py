"""A kernel compiled with ``no_cpython_wrapper=True`` (``structperc._kernels``: one that only kernels
call) has no Python entry point: called from Python, numba jumps to none and the process crashes. No
Python code of the package, its tests, benchmarks or experiments may name one outside a kernel."""
import ast
import importlib
import pkgutil
from pathlib import Path

from numba.core.registry import CPUDispatcher

import structperc._kernels

ROOT = Path(__file__).resolve().parents[1]


def inner_kernels():
    found = set()
    for info in pkgutil.walk_packages(structperc._kernels.__path__, "structperc._kernels."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__
                    and value.targetoptions.get("no_cpython_wrapper")):
                found.add(name)
    return found


def jitted(node):
    return any("njit" in ast.unparse(decorator) for decorator in node.decorator_list)


def names_outside_kernels(tree):
    """Every name read in ``tree`` outside the bodies of @njit functions (and the lines that name it)."""
    out = {}

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and jitted(node):
            return
        if isinstance(node, ast.Name):
            out.setdefault(node.id, []).append(node.lineno)
        if isinstance(node, ast.Attribute):
            out.setdefault(node.attr, []).append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def test_no_inner_kernel_is_named_outside_a_kernel():
    inner = inner_kernels()
    assert len(inner) > 10, "the walk found too few inner kernels to mean anything"
    misuses = []
    for folder in ("structperc", "tests", "benchmarks", "experiments"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name, lines in names_outside_kernels(ast.parse(path.read_text(encoding="utf-8"))).items():
                if name in inner:
                    misuses.append(f"{path.relative_to(ROOT)}:{lines[0]}: {name}")
    assert not misuses, "inner kernels named outside a kernel (called from Python, they crash): " + ", ".join(misuses)
