"""The package's layers: no module imports a layer above its own, and no two modules of
one package import each other (directly or round a longer cycle).

Layers, lowest first (a layer may import its own and any lower one)::

    0  qualspec._version, qualspec.errors, qualspec.spec, qualspec.testing
    1  qualspec.providers, qualspec.store, qualspec.prompts
    2  qualspec.engine
    3  qualspec.judges, qualspec.analysis
    4  qualspec.report, qualspec.testkit, qualspec.rubrics, qualspec.lab
    5  qualspec.web, qualspec.cli
    6  qualspec (the top-level package, which exports from every layer)

``spec`` (suite models) and ``errors`` sit below the engine: the engine reads suites, and
every layer raises qualspec's errors. ``testing`` (the fake server tests start) depends on
nothing of qualspec's but errors.

Every import counts: at module level, inside functions (the package imports lazily, so
most cross-package imports are there) and under ``if TYPE_CHECKING:`` (an annotation that
names a higher layer is a dependency of the design too: the engine naming the criteria
judge's type is the judges <-> engine cycle this test exists to keep out).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "qualspec"

LAYERS: dict[str, int] = {
    "_version": 0,
    "errors": 0,
    "spec": 0,
    "testing": 0,
    "providers": 1,
    "store": 1,
    "prompts": 1,
    "engine": 2,
    "judges": 3,
    "analysis": 3,
    "report": 4,
    "testkit": 4,
    "rubrics": 4,
    "lab": 4,
    "web": 5,
    "cli": 5,
    "": 6,  # the top-level package
}

# Cycles between the files of one package that stay for now, each with why.
KNOWN_CYCLES: set[frozenset[str]] = set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SRC.rglob("*.py") if "migrations" not in p.parts}


def _imports(name: str, path: Path) -> set[str]:
    """Every ``qualspec`` module ``path`` imports, wherever the import statement is."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            out.add(module)
            # ``from qualspec.engine import _calls`` imports a module too
            out.update(f"{module}.{a.name}" for a in node.names)
    return {m for m in out if m == "qualspec" or m.startswith("qualspec.")}


def _layer(module: str) -> tuple[str, int]:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    return top, LAYERS[top]


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {
        name: {m for m in _imports(name, path) if m in modules and m != name}
        for name, path in modules.items()
    }


def test_every_package_has_a_layer() -> None:
    tops = {_module_name(p).split(".")[1] for p in SRC.rglob("*.py") if p.parent != SRC}
    tops |= {p.stem for p in SRC.glob("*.py") if p.stem != "__init__"}
    assert tops <= set(LAYERS), f"give these a layer in LAYERS: {sorted(tops - set(LAYERS))}"


def test_no_import_reaches_a_higher_layer() -> None:
    upward = []
    for name, imported in sorted(_graph().items()):
        here, level = _layer(name)
        for other in sorted(imported):
            there, other_level = _layer(other)
            if other_level > level:
                upward.append(f"{name} ({here or 'qualspec'}, layer {level}) imports {other} "
                              f"({there or 'qualspec'}, layer {other_level})")
    assert not upward, "imports upward:\n" + "\n".join(upward)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_no_cycle_between_the_files_of_a_package() -> None:
    graph = _graph()
    # a package's __init__ re-exports its modules: the edges that matter are between files
    files = {
        name: {m for m in deps if not _modules()[m].name == "__init__.py"}
        for name, deps in graph.items()
        if _modules()[name].name != "__init__.py"
    }
    found = [c for c in _cycles(files) if frozenset(c) not in KNOWN_CYCLES]
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from qualspec.judges import CriteriaJudge\n", {"qualspec.judges"}),
        ("if TYPE_CHECKING:\n    from qualspec.judges import X\n", {"qualspec.judges"}),
        ("def f():\n    import qualspec.cli\n", {"qualspec.cli"}),
        ("from . import _calls\n", {"qualspec.engine", "qualspec.engine._calls"}),
    ],
)
def test_every_kind_of_import_is_read(tmp_path: Path, source: str, expected: set[str]) -> None:
    path = tmp_path / "mod.py"
    path.write_text(source)
    found = {m for m in _imports("qualspec.engine.mod", path) if "." in m}
    assert expected <= found | {"qualspec.engine"}
    assert {m for m in expected if m != "qualspec.engine"} <= found
