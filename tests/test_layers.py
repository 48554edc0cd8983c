"""The package's layers: no module imports a layer above its own, and no two files of one
package import each other (directly or round a longer cycle).

Layers, lowest first (a layer may import its own and any lower one)::

    0  qualspec.version, qualspec.errors, qualspec.messages, qualspec.plugins,
       qualspec.lazy, qualspec.spec, qualspec.testing
    1  qualspec.providers, qualspec.store, qualspec.prompts
    2  qualspec.engine
    3  qualspec.judges, qualspec.analysis
    4  qualspec.report, qualspec.testkit, qualspec.rubrics, qualspec.lab
    5  qualspec.web, qualspec.cli
    6  qualspec (the top-level package, which exports from every layer)

``spec`` (suite models) and ``errors`` sit below the engine and the providers: the engine
reads suites, the providers read their ``ProviderConfig``, and every layer raises
qualspec's errors. ``testing`` (the fake server tests start) needs nothing of qualspec's
but errors.

Every import counts for the layers: at module level, inside functions (the package
imports lazily, so most imports between packages are there) and under
``if TYPE_CHECKING:`` (a type named from a higher layer is a dependency of the design
too: the engine naming the criteria judge's type was the engine <-> judges cycle).

For the cycles between the files of one package every import counts too, but one: a file
may name a type of its own package through the package (``if TYPE_CHECKING: from
qualspec.engine import Session``). The package's ``__init__`` exports every file's names,
so that import says nothing about which file needs which; it is how a protocol names the
object that hands it over (the evaluators' ``PrepareContext`` names the ``Session``) and is
never executed. An import of another file by its module name, at run time or for types,
is an edge.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "qualspec"

LAYERS: dict[str, int] = {
    "version": 0,
    "errors": 0,
    "messages": 0,
    "plugins": 0,
    "lazy": 0,
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

# Imports upward that stay for now, each with why.
KNOWN_UPWARD: set[tuple[str, str]] = {
    # the suite check offers the registered provider names ("did you mean") by asking the
    # provider registry; to go once the plugin registry lives below both (issue 18, item 3)
    ("qualspec.spec._check", "qualspec.providers"),
}

# Cycles between the files of one package that stay for now, each with why.
# (``cli._app`` imports the command modules by name, only the one a command line names:
# grader-check, which rebuilds a recorded ``qualspec run`` command line with the parser, no
# longer makes a cycle of files with it.)
KNOWN_CYCLES: set[frozenset[str]] = set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@functools.cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SRC.rglob("*.py") if "migrations" not in p.parts}


def _type_only_lines(tree: ast.Module) -> set[int]:
    """The line numbers of the statements under ``if TYPE_CHECKING:``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                out.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return out


def _imports(name: str, path: Path) -> dict[str, bool]:
    """Every ``qualspec`` module ``path`` imports, wherever the import statement is, and
    whether every import of it is for types only (under ``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typed = _type_only_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: dict[str, bool] = {}

    def add(module: str, node: ast.stmt) -> None:
        if module == "qualspec" or module.startswith("qualspec."):
            out[module] = out.get(module, True) and node.lineno in typed

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            add(module, node)
            for alias in node.names:  # ``from qualspec.engine import _calls``: a module
                add(f"{module}.{alias.name}", node)
    return out


def _layer(module: str) -> tuple[str, int]:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    return top, LAYERS[top]


@functools.cache
def _graph() -> dict[str, dict[str, bool]]:
    """Each module's imports of other modules: name -> type only."""
    modules = _modules()
    return {
        name: {m: typed for m, typed in _imports(name, path).items() if m in modules and m != name}
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
            if other_level > level and (name, _package(other)) not in KNOWN_UPWARD:
                upward.append(
                    f"{name} ({here or 'qualspec'}, layer {level}) imports {other} "
                    f"({there or 'qualspec'}, layer {other_level})"
                )
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


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def _file_edges() -> dict[str, set[str]]:
    """Each file's imports of the other files of its package (see the module docstring:
    a type-only import of the package itself is no edge)."""
    modules = _modules()
    out: dict[str, set[str]] = {}
    for name, imported in _graph().items():
        if modules[name].name == "__init__.py":
            continue
        own = name.rpartition(".")[0]
        out[name] = set()
        for other in imported:
            if other.rpartition(".")[0] == own:  # another package's: the layers decide
                out[name].add(other)
        for other, typed in imported.items():  # the package itself, at run time
            if other == own and not typed:
                out[name].add(other)
    return out


def test_no_cycle_between_the_files_of_a_package() -> None:
    found = [c for c in _cycles(_file_edges()) if frozenset(c) not in KNOWN_CYCLES]
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_known_exceptions_still_exist() -> None:
    """An exception that no longer occurs is taken off the list (so none comes back)."""
    cycles = {frozenset(c) for c in _cycles(_file_edges())}
    assert KNOWN_CYCLES <= cycles, KNOWN_CYCLES - cycles
    graph = _graph()
    upward = {(n, _package(m)) for n, deps in graph.items() for m in deps}
    assert KNOWN_UPWARD <= upward, KNOWN_UPWARD - upward


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from qualspec.judges import CriteriaJudge\n", {"qualspec.judges": False}),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from qualspec.judges import X\n",
            {"qualspec.judges": True},
        ),
        ("def f():\n    import qualspec.cli\n", {"qualspec.cli": False}),
        ("from . import _calls\n", {"qualspec.engine._calls": False}),
        ("from ._calls import Reply\n", {"qualspec.engine._calls": False}),
    ],
)
def test_every_kind_of_import_is_read(
    tmp_path: Path, source: str, expected: dict[str, bool]
) -> None:
    path = tmp_path / "mod.py"
    path.write_text(source)
    found = _imports("qualspec.engine.mod", path)
    assert {m: found.get(m) for m in expected} == expected


def test_a_cycle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
