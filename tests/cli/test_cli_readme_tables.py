"""The docs' `qualspec run` flag table (guides/running.md) and exit codes match the parser."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from qualspec.cli import _app
from qualspec.cli._app import build_parser

FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def _run_section(repo_root: Path) -> str:
    return (repo_root / "docs" / "guides" / "running.md").read_text()


def _table_flags(section: str) -> set[str]:
    table = section[section.index("| flag | meaning |") :]
    rows = []
    for line in table.splitlines():
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1])  # the flag column only
    return {flag for row in rows for flag in FLAG.findall(row)}


def _parser_flags() -> set[str]:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    run = commands.choices["run"]
    return {
        option
        for action in run._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }


def test_run_flag_table_matches_the_parser(repo_root: Path) -> None:
    table, parser = _table_flags(_run_section(repo_root)), _parser_flags()
    assert table - parser == set(), "flags in the docs' run table that the parser lacks"
    assert parser - table == set(), "run flags missing from the docs' run table"


def test_exit_codes_match_the_cli(repo_root: Path) -> None:
    section = _run_section(repo_root)
    paragraph = section[section.index("Exit codes:") :].split("\n\n")[0]
    listed = {int(code) for code in re.findall(r"(?:: |, |\n)(\d{1,3}) (?=[a-z])", paragraph)}
    defined = {v for k, v in vars(_app).items() if k.startswith("EXIT_") and isinstance(v, int)}
    assert {0, 1, 2, 130} <= listed
    assert listed == defined
    # and the exit codes reference lists the same, one row each
    reference = (repo_root / "docs" / "reference" / "exit-codes.md").read_text()
    assert {int(code) for code in re.findall(r"^\| (\d+) \|", reference, re.M)} == defined
