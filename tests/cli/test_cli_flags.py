"""Flags: global ones anywhere on the line, nonsensical values refused with exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualspec.cli import main
from qualspec.cli._app import build_parser

SUITE = """\
name: flags
candidates: [{name: a, model: local/smollm2}]
scenarios: [{name: x, prompt: hi, criteria: [c]}]
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(SUITE)
    return path


def _code(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    code = caught.value.code
    assert isinstance(code, int)
    return code


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "SUITE", "--debug", "--dry-run"],
        ["--debug", "run", "SUITE", "--dry-run"],
        ["run", "SUITE", "--dry-run", "--verbose"],
        ["-v", "run", "SUITE", "--dry-run", "--debug"],
        ["schema", "--debug"],
        ["runs", "list", "--debug", "--verbose"],
        ["cache", "stats", "--debug"],
        ["prompts", "list", "-v", "--debug"],
    ],
)
def test_global_flags_work_before_or_after_the_command(argv: list[str], suite: Path) -> None:
    argv = [str(suite) if a == "SUITE" else a for a in argv]
    ns = build_parser().parse_args(argv)
    assert ns.debug is ("--debug" in argv)
    assert _code(argv) == 0


def test_debug_after_the_command_shows_the_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SUITE.replace("local/smollm2", "local/smollm2\nbogus: 1"))
    assert _code(["run", str(bad), "--dry-run", "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags",
    [
        ["--retries", "-1"],
        ["--retries", "x"],
        ["--runs", "0"],
        ["--max-concurrency", "-3"],
        ["--timeout", "0"],
        ["--timeout", "nan"],
        ["--timeout", "inf"],
        ["--max-cost", "-1"],
        ["--max-cost", "nan"],
        ["--store-retry", "-5"],
        ["--threshold", "11"],
        ["--threshold", "nan"],
        ["--cache-ttl", "candidate=-5"],
        ["--cache-ttl", "candidate=nan"],
        ["--cache-ttl", "bogus=5"],
    ],
)
def test_nonsensical_run_flag_values_exit_2(
    flags: list[str], suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _code(["run", str(suite), "--dry-run", *flags]) == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["runs", "list", "--limit", "0"],
        ["diff", "a", "b", "--noise", "-1"],
        ["diff", "a", "b", "--noise", "nan"],
        ["prompts", "show", "judge_criteria", "0"],
        ["prompts", "diff", "judge_criteria", "1", "-2"],
    ],
)
def test_nonsensical_values_of_other_commands_exit_2(argv: list[str]) -> None:
    assert _code(argv) == 2


def test_retries_zero_is_allowed(suite: Path) -> None:
    assert _code(["run", str(suite), "--dry-run", "--retries", "0"]) == 0


@pytest.mark.parametrize("url", ["bogus://x", "not a url at all", "mysql://u@h/db"])
def test_a_bad_database_url_exits_2(
    url: str, suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _code(["run", str(suite), "--db", url, "--no-judge", "-q"]) == 2
    assert _code(["runs", "list", "--db", url]) == 2
    err = capsys.readouterr().err
    assert "database URL" in err and "internal error" not in err


def test_resume_of_an_unknown_run_id_exits_2(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _code(["run", str(suite), "--resume", "nosuchrun", "--no-judge", "-q"]) == 2
    err = capsys.readouterr().err
    assert "nosuchrun" in err
