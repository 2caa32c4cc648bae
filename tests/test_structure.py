"""The shape of the package: few root modules, short modules, no import cycles (function-level imports
included), no import of another module's private name, and layers that import only downward."""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "structperc"

# the floors, lowest first: a module may import its own floor and the floors below it
FLOORS = [
    {"_kernels", "errors", "corpus", "chunks", "utils"},
    {"readers", "data"},
    {"features", "evaluate", "metrics"},
    {"model"},
    {"train", "clusters"},
    {"estimator"},
    {"nbest", "rerank", "ensembles", "models"},  # a reranked model is read as any ensemble file is
    {"report", "serve"},
    {"cli", "warmup", "__init__", "__main__"},
]


def _module(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path):
    """(line, imported module, names) of every import of structperc in the file, at any depth."""
    module = _module(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            if target.startswith("structperc"):
                yield node.lineno, target, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("structperc"):
                    yield node.lineno, alias.name, []


MODULES = {_module(p): p for p in PACKAGE.rglob("*.py")}


def _resolve(target, name):
    """The module that `from target import name` reads: target.name when that is a module."""
    return f"{target}.{name}" if f"{target}.{name}" in MODULES else target


def _graph():
    graph = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for _, target, names in _imports(path):
            for imported in ([_resolve(target, n) for n in names] or [target]):
                if imported in MODULES and imported != module:
                    graph[module].add(imported)
    return graph


def _floor(module):
    top = module.split(".")[1] if "." in module else "__init__"
    return next(i for i, floor in enumerate(FLOORS) if top in floor)


def test_the_package_root_keeps_at_most_twelve_modules():
    assert len(list(PACKAGE.glob("*.py"))) <= 12


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_500_lines(module):
    assert len(MODULES[module].read_text(encoding="utf-8").splitlines()) <= 500


def test_no_import_of_another_modules_private_name():
    found = []
    for module, path in MODULES.items():
        for line, target, names in _imports(path):
            for name in names:
                if name.startswith("_") and not name.startswith("__") and _resolve(target, name) == target:
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {target}.{name}")
    assert found == []


def test_no_import_cycle_counting_function_level_imports():
    graph, index, low, stack, on_stack, cycles = _graph(), {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert cycles == []


def test_layers_import_only_downward():
    upward = [f"{m} -> {t}" for m, targets in _graph().items() for t in targets if _floor(t) > _floor(m)]
    assert upward == []


def test_the_checks_see_a_cycle_and_an_upward_import(tmp_path):
    """The graph is built from real imports: a known downward import is there, none upward."""
    graph = _graph()
    assert "structperc.train.base" in graph["structperc.train.perceptron"]
    assert _floor("structperc._kernels.learn.crf") < _floor("structperc.cli.main")
