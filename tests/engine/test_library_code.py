"""Library code does not use ``assert`` for control flow (``python -O`` strips it) nor
private attributes of aiohttp."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "qualspec"


def _modules() -> list[Path]:
    paths = sorted(SRC.rglob("*.py"))
    assert paths, SRC
    return paths


def test_no_assert_statements_in_library_code() -> None:
    found = [
        f"{path.relative_to(SRC)}:{node.lineno}"
        for path in _modules()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assert)
    ]
    assert found == [], "replace these asserts by explicit checks: " + ", ".join(found)


def test_no_private_aiohttp_attributes() -> None:
    """No ``x._close`` style access to another library's internals (``connector._close``)."""
    private = {"_close", "_conns", "_connector", "_closed", "_acquired"}
    found = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = None
            if isinstance(node, ast.Attribute):
                name = node.attr
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "setattr", "hasattr")
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
            ):
                name = node.args[1].value
            if name in private:
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: {name}")
    assert found == [], found
