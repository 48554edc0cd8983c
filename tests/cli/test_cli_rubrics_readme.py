"""The "Rubric mining" guide's flag table names exactly the flags of the rubric commands."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from qualspec.cli._app import build_parser

FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
GLOBAL = {"--help", "--debug", "--verbose"}


def test_rubric_flag_table_matches_the_parsers(repo_root: Path) -> None:
    section = (repo_root / "docs" / "guides" / "rubric-mining.md").read_text()
    table = section[section.index("| flag | meaning |") :]
    rows = []
    for line in table.splitlines():
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1])
    documented = {flag for row in rows for flag in FLAG.findall(row)}
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    (actions,) = [
        a for a in commands.choices["rubrics"]._actions if isinstance(a, argparse._SubParsersAction)
    ]
    flags = {
        option
        for name in ("extract", "summarize", "judge")
        for action in actions.choices[name]._actions
        for option in action.option_strings
        if option.startswith("--") and option not in GLOBAL
    }
    assert documented == flags
