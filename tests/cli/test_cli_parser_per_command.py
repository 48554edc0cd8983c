"""The command line builds only the command it names: the same parser as in the whole tree."""

from __future__ import annotations

import argparse

import pytest

from qualspec.cli._app import build_parser


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {name: sub for group in groups for name, sub in group.choices.items()}


def _described(parser: argparse.ArgumentParser) -> list[str]:
    """A command's help, then each of its subcommands' (recursively)."""
    out = [parser.format_help()]
    for name, sub in sorted(_choices(parser).items()):
        out += [name, *_described(sub)]
    return out


WHOLE = build_parser()
COMMANDS = sorted(_choices(WHOLE))


def test_every_command_is_in_the_tree() -> None:
    assert {"run", "runs", "diff", "cache", "reference", "serve"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_built_alone_is_the_command_of_the_whole_tree(command: str) -> None:
    alone = build_parser(["--verbose", command, "more"])
    assert list(_choices(alone)) == [command]
    assert _described(_choices(alone)[command]) == _described(_choices(WHOLE)[command])


def test_a_command_line_naming_no_command_gets_the_whole_tree() -> None:
    for argv in ([], ["--debug"], ["nonsense"], ["--version"]):
        assert list(_choices(build_parser(argv))) == list(_choices(WHOLE))


def test_run_parses_the_same_alone(tmp_path: object) -> None:
    argv = ["run", "suite.yaml", "--no-calibration", "--max-concurrency", "5", "--debug"]
    assert vars(build_parser(argv).parse_args(argv)) == vars(WHOLE.parse_args(argv))
