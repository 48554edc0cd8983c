"""No code reaches into another package's private modules (issue 18, item 6).

A module may import ``qualspec.X._private`` (or any ``_name`` below ``qualspec.X``) only if it
is part of package X: a file of ``src/qualspec/X/`` or a test in ``tests/X/``, where testing
the private helper is the point. Everything else, the other packages, the other tests, the
benchmarks and the examples, uses the names ``qualspec.X`` exports. A test at the top of
``tests/`` counts as the top-level package's (it may import ``qualspec._private``, of which
there is none). Dunder names (``__version__``) are public.

Read are every kind of import (at module level, in functions, under ``if TYPE_CHECKING:``,
``from qualspec.engine import _calls``, relative imports in ``src``) and a string naming a
private module handed straight to a call (``monkeypatch.setattr("qualspec.x._y.f", ...)``,
``importlib.import_module("qualspec.x._y")``, ``mock.patch(...)``).

A test in its own package's folder takes from a private module only what the package does
not export: what it does export comes from ``qualspec.X`` (a test of a private helper imports
the helper; the rest is the public API).

Ruff holds part of the rule too (``PLC2701`` in ``pyproject.toml``: no private import in
``benchmarks`` and ``examples``), but it cannot tell one package's tests from another's.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("src", "tests", "benchmarks", "examples")

_DOTTED = re.compile(r"qualspec(\.\w+)+")


def _private_at(parts: list[str]) -> int | None:
    """The index of the first private part of a dotted name (``_x``, not ``__x__``)."""
    for i, part in enumerate(parts):
        if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            return i
    return None


def _owner(path: Path) -> str | None:
    """The package whose private modules ``path`` may import: ``qualspec.X`` for a file of
    ``src/qualspec/X/`` or ``tests/X/``, ``qualspec`` for a top-level file of either, None
    for the benchmarks, the examples and any test folder that is no package's."""
    rel = path.relative_to(ROOT).parts
    if rel[0] == "src" and len(rel) > 1 and rel[1] == "qualspec":
        return "qualspec" if len(rel) == 3 else f"qualspec.{rel[2]}"
    if rel[0] == "tests":
        if len(rel) == 2:
            return "qualspec"
        if (ROOT / "src" / "qualspec" / rel[1] / "__init__.py").is_file():
            return f"qualspec.{rel[1]}"
    return None


def _src_module(path: Path) -> str | None:
    rel = path.relative_to(ROOT).parts
    if rel[0] != "src":
        return None
    parts = list(Path(*rel[1:]).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, tree: ast.AST) -> Iterator[tuple[int, str, list[str]]]:
    """Every qualspec name ``path`` reaches: (line, dotted module, names imported from it).
    ``from qualspec.engine import _calls`` is read as the module ``qualspec.engine._calls``."""
    module_name = _src_module(path)
    package = None
    if module_name is not None:
        package = module_name if path.name == "__init__.py" else module_name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if package is None:  # a relative import outside src: not qualspec's
                    continue
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names = [alias.name for alias in node.names]
            if _private_at(module.split(".")) is None:
                for name in names:
                    if _private_at([name]) is not None:
                        yield node.lineno, f"{module}.{name}", []
                yield node.lineno, module, [n for n in names if _private_at([n]) is None]
            else:
                yield node.lineno, module, names
        elif isinstance(node, ast.Call):
            for arg in node.args[:1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    if _DOTTED.fullmatch(arg.value):
                        yield node.lineno, arg.value, []


@functools.cache
def _exports(package: str) -> frozenset[str]:
    try:
        module = importlib.import_module(package)
    except ImportError:  # pragma: no cover - every package imports in the test environment
        return frozenset()
    return frozenset(getattr(module, "__all__", ()))


def _advice(package: str, names: list[str], test_folder: str | None) -> str:
    """What to write instead: the public import of each name, or what to do where the
    package does not export it (in a test: export it, or move the test to ``test_folder``)."""
    public = [n for n in names if n in _exports(package)]
    top = [n for n in names if n not in public and n in _exports("qualspec")]
    missing = [n for n in names if n not in public and n not in top]
    out = []
    if public:
        out.append(f"from {package} import {', '.join(public)}")
    if top:
        out.append(f"from qualspec import {', '.join(top)}")
    if missing or not names:
        what = ", ".join(missing) if missing else "what you need"
        move = f" or move the test to {test_folder}" if test_folder else ""
        out.append(f"{package} does not export {what}: export it from {package}'s __init__{move}")
    return "; ".join(out)


def private_imports(path: Path, source: str | None = None) -> list[str]:
    """The private imports of another package's modules in ``path``, each as
    ``file:line: name -> what to use``."""
    text = path.read_text(encoding="utf-8") if source is None else source
    tree = ast.parse(text)
    owner = _owner(path)
    found = []
    for line, module, names in _imports(path, tree):
        parts = module.split(".")
        if parts[0] != "qualspec":
            continue
        private = _private_at(parts)
        if private is None:
            continue
        package = ".".join(parts[:private])
        if package == owner:
            continue
        folder = None
        if path.relative_to(ROOT).parts[0] == "tests":  # qualspec._x: tests/ itself
            folder = "tests/" if private == 1 else f"tests/{parts[1]}/"
        shown = f"{module} ({', '.join(names)})" if names else module
        found.append(
            f"{path.relative_to(ROOT)}:{line}: {shown} -> {_advice(package, names, folder)}"
        )
    return found


def public_names_taken_privately(path: Path, source: str | None = None) -> list[str]:
    """In a test, the names imported from its own package's private modules although the
    package exports them (a test of a private helper imports the helper; the rest of what
    it uses comes from the public API)."""
    if path.relative_to(ROOT).parts[0] != "tests":
        return []
    text = path.read_text(encoding="utf-8") if source is None else source
    owner = _owner(path)
    found = []
    for line, module, names in _imports(path, ast.parse(text)):
        parts = module.split(".")
        private = _private_at(parts)
        if parts[0] != "qualspec" or private is None or ".".join(parts[:private]) != owner:
            continue
        public = [n for n in names if n in _exports(owner)]
        if public:
            found.append(
                f"{path.relative_to(ROOT)}:{line}: {module} ({', '.join(public)}) -> "
                f"from {owner} import {', '.join(public)}"
            )
    return found


def _files() -> list[Path]:
    out = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).parts
            if "migrations" in rel or "data" in rel[:3] and rel[0] == "tests":
                continue
            out.append(path)
    return out


def test_no_file_imports_another_packages_private_modules() -> None:
    offenders = [o for path in _files() for o in private_imports(path)]
    assert not offenders, "private imports across packages:\n" + "\n".join(offenders)


def test_tests_take_what_their_package_exports_from_its_public_api() -> None:
    offenders = [o for path in _files() for o in public_names_taken_privately(path)]
    assert not offenders, "import these from the package:\n" + "\n".join(offenders)


def test_every_folder_is_read() -> None:
    files = {p.relative_to(ROOT).parts[0] for p in _files()}
    assert files == set(FOLDERS)


# The test of the test: each bad import is caught, with where and what to use instead.

_MOVE = "does not export {what}: export it from {pkg}'s __init__ or move the test to {folder}"
_EXPORT = "does not export {what}: export it from {pkg}'s __init__"


@pytest.mark.parametrize(
    ("where", "source", "expected"),
    [
        (
            "tests/analysis/test_x.py",
            "from qualspec.store._records import RunRecord\n",
            "1: qualspec.store._records (RunRecord) -> from qualspec.store import RunRecord",
        ),
        (
            "tests/engine/test_x.py",
            "def f():\n    from qualspec.providers import _openai\n",
            "2: qualspec.providers._openai -> qualspec.providers "
            + _MOVE.format(
                what="what you need", pkg="qualspec.providers", folder="tests/providers/"
            ),
        ),
        (
            "benchmarks/bench.py",
            "import qualspec.engine._plan as plan\n",
            "1: qualspec.engine._plan -> qualspec.engine "
            + _EXPORT.format(what="what you need", pkg="qualspec.engine"),
        ),
        (
            "examples/example.py",
            "from qualspec.spec._models import ProviderConfig, _Hidden\n",
            "1: qualspec.spec._models (ProviderConfig, _Hidden) -> from qualspec.spec import "
            "ProviderConfig; qualspec.spec " + _EXPORT.format(what="_Hidden", pkg="qualspec.spec"),
        ),
        (
            "tests/cli/test_x.py",
            "def test(monkeypatch):\n"
            "    monkeypatch.setattr('qualspec.engine._calls.sleep', None)\n",
            "2: qualspec.engine._calls.sleep -> qualspec.engine "
            + _MOVE.format(what="what you need", pkg="qualspec.engine", folder="tests/engine/"),
        ),
        (
            "src/qualspec/report/_x.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from qualspec.engine._plan import Plan\n",
            "3: qualspec.engine._plan (Plan) -> from qualspec.engine import Plan",
        ),
        (
            "src/qualspec/report/_x.py",
            "from ..engine import _plan\n",
            "1: qualspec.engine._plan -> qualspec.engine "
            + _EXPORT.format(what="what you need", pkg="qualspec.engine"),
        ),
        (
            "tests/e2e/test_x.py",
            "from qualspec.engine._plan import expand\n",
            "1: qualspec.engine._plan (expand) -> from qualspec.engine import expand",
        ),
        (
            "tests/test_x.py",
            "from qualspec.judges._corpus import Label\n",
            "1: qualspec.judges._corpus (Label) -> qualspec.judges "
            + _MOVE.format(what="Label", pkg="qualspec.judges", folder="tests/judges/"),
        ),
    ],
)
def test_a_private_import_of_another_package_is_caught(
    where: str, source: str, expected: str
) -> None:
    assert private_imports(ROOT / where, source) == [f"{where}:{expected}"]


@pytest.mark.parametrize(
    ("where", "source"),
    [
        ("tests/engine/test_x.py", "from qualspec.engine._plan import _private_helper\n"),
        ("tests/store/test_x.py", "from qualspec.store import _cache\n"),
        ("src/qualspec/engine/_x.py", "from qualspec.engine._calls import _helper\n"),
        ("src/qualspec/engine/_x.py", "from ._calls import _helper\nfrom . import _plan\n"),
        ("benchmarks/bench.py", "from qualspec import __version__\nimport qualspec.engine\n"),
        ("examples/example.py", "from qualspec.engine import expand, Plan\n"),
        ("tests/test_x.py", '"""Names qualspec.engine._calls in prose."""\n'),
    ],
)
def test_what_the_rule_allows_passes(where: str, source: str) -> None:
    assert private_imports(ROOT / where, source) == []


def test_a_public_name_taken_from_a_private_module_in_a_test_is_caught() -> None:
    source = "from qualspec.engine._plan import _helper, expand\n"
    assert public_names_taken_privately(ROOT / "tests/engine/test_x.py", source) == [
        "tests/engine/test_x.py:1: qualspec.engine._plan (expand) -> "
        "from qualspec.engine import expand"
    ]
    assert public_names_taken_privately(ROOT / "src/qualspec/engine/_x.py", source) == []
    private_only = "import qualspec.engine._plan as plan\nfrom qualspec.engine._plan import _h\n"
    assert public_names_taken_privately(ROOT / "tests/engine/test_x.py", private_only) == []
