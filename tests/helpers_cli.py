"""Running the ``qualspec`` command in-process, for the tests of every package."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from qualspec.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``qualspec ARGS``: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    captured = capsys.readouterr()
    code = exc.value.code
    return (code if isinstance(code, int) else 1), captured.out, captured.err


def run_cli_joined(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``qualspec ARGS``: (exit code, stdout and stderr together)."""
    code, out, err = run_cli(capsys, *args)
    return code, out + err


def run_cli_words(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``qualspec ARGS``, which must exit 0: its stdout with white space folded."""
    code, out, err = run_cli(capsys, *args)
    assert code == 0, out + err
    return " ".join(out.split())


def work_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: Mapping[str, str]) -> None:
    """Run the test's commands in ``tmp_path`` with ``env`` set (for an autouse fixture)."""
    monkeypatch.chdir(tmp_path)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def run_suite(capsys: pytest.CaptureFixture[str], suite: Path) -> str:
    """``qualspec run SUITE --quiet --no-calibration -o r.json`` into the default store,
    which must exit 0: the id of the run it recorded."""
    from qualspec.store import Store

    code, out, err = run_cli(
        capsys, "run", str(suite), "--quiet", "--no-calibration", "-o", "r.json"
    )
    assert code == 0, out + err
    with Store.open() as store:
        return store.list_runs(limit=1)[0].id
