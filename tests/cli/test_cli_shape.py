"""The CLI's shape: each command module builds its own parser; small modules and functions;
building the parser imports nothing heavy (``qualspec --help`` stays fast)."""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import qualspec.cli
from qualspec.cli._app import build_parser

CLI = Path(qualspec.cli.__file__).parent
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[Any]:
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        return [(path, parser)]
    return [
        leaf
        for group in groups
        for name, sub in group.choices.items()
        for leaf in _leaves(sub, (*path, name))
    ]


def test_each_command_is_added_by_the_module_of_its_handler(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made_in: dict[int, str] = {}
    add_parser = argparse._SubParsersAction.add_parser

    def recording(self: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        parser = add_parser(self, name, **kwargs)
        made_in[id(parser)] = sys._getframe(1).f_globals["__name__"]
        return parser

    monkeypatch.setattr(argparse._SubParsersAction, "add_parser", recording)
    leaves = _leaves(build_parser())
    assert len(leaves) > 30  # run, runs list, ..., rubrics format
    for path, parser in leaves:
        handler = parser.get_default("handler")
        assert callable(handler), path
        assert made_in[id(parser)] == handler.__module__, " ".join(path)
        assert handler.__module__ != "qualspec.cli._app", " ".join(path)


def test_a_command_line_builds_and_imports_only_the_command_it_names() -> None:
    whole = build_parser()
    groups = [a for a in whole._actions if isinstance(a, argparse._SubParsersAction)]
    names = list(groups[0].choices)
    assert len(names) > 15  # init, run, ..., rubrics
    for name in names:
        alone = build_parser(["-v", name, "--help"])
        alone_groups = [a for a in alone._actions if isinstance(a, argparse._SubParsersAction)]
        assert list(alone_groups[0].choices) == [name]
        expected = {path: p.get_default("handler") for path, p in _leaves(groups[0].choices[name])}
        built = {
            path: p.get_default("handler") for path, p in _leaves(alone_groups[0].choices[name])
        }
        assert built == expected, name
    # a plain run imports the module of `run` and none of the other commands' modules
    code = (
        "import sys; from qualspec.cli import build_parser; "
        "build_parser(['run', 'suite.yaml']).parse_args(['run', 'suite.yaml']); "
        "print(sorted(m for m in sys.modules if m.startswith('qualspec.cli.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120
    ).stdout
    loaded = set(ast.literal_eval(out.strip()))
    others = {"_init", "_starter", "_history", "_quality", "_agreement", "_grader_check"}
    others |= {"_misc", "_reference", "_judge_check", "_labels", "_test", "_lab", "_trend"}
    assert "qualspec.cli._run" in loaded
    assert sorted(loaded & {f"qualspec.cli.{m}" for m in others}) == []


def test_every_command_takes_the_global_flags() -> None:
    for path, parser in _leaves(build_parser()):
        options = {o for action in parser._actions for o in action.option_strings}
        assert {"--debug", "--verbose", "-v"} <= options, " ".join(path)


@pytest.mark.parametrize("module", sorted(CLI.glob("*.py")), ids=lambda p: p.name)
def test_no_module_or_function_is_too_long(module: Path) -> None:
    source = module.read_text(encoding="utf-8")
    assert len(source.splitlines()) <= MAX_MODULE_LINES
    long = {
        node.name: node.end_lineno - node.lineno + 1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    }
    assert long == {}


def test_building_the_parser_imports_nothing_heavy() -> None:
    heavy = (
        "asyncio",
        "sqlalchemy",
        "pydantic",
        "rich",
        "aiohttp",
        "jinja2",
        "yaml",
        "qualspec.engine",
        "qualspec.store",
        "qualspec.spec",
        "qualspec.judges",
        "qualspec.report",
    )
    code = (
        "import sys; from qualspec.cli._app import build_parser; "
        "build_parser().format_help(); "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120
    ).stdout
    assert out.strip() == "[]"
