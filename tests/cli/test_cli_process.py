"""``qualspec`` as a process: what a plain run loads, and how the process ends.

A plain ``qualspec run`` (default flags) loads neither the HTML report nor the modules of
other commands (trends, diffs, comparisons, graders): the packages import their modules
on first use. A command run as the script ends without the interpreter's teardown, after
everything a normal exit does that is seen outside: atexit handlers, flushed output, the
exit code, the store closed (its SQLite log checkpointed away).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from qualspec.cli import main
from qualspec.testing import FakeServer

# modules a plain run has no use for (each loaded by the package before)
NOT_IN_A_PLAIN_RUN = (
    "jinja2",
    "numpy",
    # a store on a SQLite file is served by the stdlib driver (PostgreSQL's needs SQLAlchemy)
    "sqlalchemy",
    "qualspec.report._html",
    "qualspec.report._html_view",
    "qualspec.report._export",
    "qualspec.analysis._trend",
    "qualspec.analysis._diff",
    "qualspec.analysis._compare",
    "qualspec.judges._comparative",
    "qualspec.judges._field_grader",
    "qualspec.judges._grader_check",
    # a run's totals ask what kind a record is from a small module of its own (issue 18)
    "qualspec.judges._comparisons",
    "qualspec.judges._field_rules",
    "qualspec.judges._expect",
    # a store at the newest schema (fresh, or already migrated) is not migrated: no alembic
    "alembic",
    # a plan that repeats no cell has no answers to compare: no embedding modules
    "qualspec.analysis._live_embeddings",
    # a run without field grades or a judge panel builds neither block
    "qualspec.analysis._fields",
    "qualspec.analysis._judge_agreement",
    "qualspec.analysis._agreement",
    # a judge without expected scoring reads no log-probabilities; a run compares no runs
    "qualspec.judges._expected",
    "qualspec.analysis._stats",
    # no dry run; no answers compared by their embeddings (one temperature, one run)
    "qualspec.cli._dry_run",
    "qualspec.analysis._kept_vectors",
    # only the module of the command named on the command line is imported
    "qualspec.cli._init",
    "qualspec.cli._starter",
    "qualspec.cli._history",
    "qualspec.cli._agreement",
    "qualspec.cli._grader_check",
    "qualspec.cli._test",
    "qualspec.cli._lab",
)


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["QUALSPEC_HOME"] = str(home)
    env["FAKE_KEY"] = "sk-test"
    env.pop("QUALSPEC_DATABASE_URL", None)
    return env


def _script(args: list[str], cwd: Path, prelude: str) -> subprocess.CompletedProcess[str]:
    """``qualspec ARGS`` as the script runs it (``main()``), after ``prelude``."""
    code = f"{prelude}\nfrom qualspec.cli import main\nmain()\n"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=_env(cwd / "home"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_plain_run_loads_no_html_report_and_no_other_commands_modules(
    tmp_path: Path,
) -> None:
    modules_file = tmp_path / "modules.json"
    prelude = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: open({str(modules_file)!r}, 'w').write("
        "json.dumps(sorted(sys.modules))))"
    )
    with FakeServer(log_requests=False) as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(
            "name: plain\n"
            "providers:\n"
            f'  fake: {{type: openai, base_url: "{server.base_url}", api_key_env: FAKE_KEY}}\n'
            "candidates: [{name: c, model: fake/model-a}]\n"
            "judge: {model: fake/judge, threshold: 7}\n"
            "scenarios:\n"
            "  - name: s\n"
            '    prompt: "question {{ i }}"\n'
            "    criteria: [answers the question]\n"
            "    inputs: [{i: 1}, {i: 2}]\n",
            encoding="utf-8",
        )
        result = _script(["run", str(suite)], tmp_path, prelude)
        loaded = set(json.loads(modules_file.read_text(encoding="utf-8")))
        # again, on the store the first run created (now at the newest schema)
        again = _script(["run", str(suite), "--no-cache"], tmp_path, prelude)
        loaded_again = set(json.loads(modules_file.read_text(encoding="utf-8")))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Calls: 2 candidate, 2 judge" in result.stdout
    assert {"qualspec.report", "qualspec.analysis", "qualspec.judges"} <= loaded
    assert [m for m in NOT_IN_A_PLAIN_RUN if m in loaded] == []
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Calls: 2 candidate, 2 judge" in again.stdout
    assert [m for m in NOT_IN_A_PLAIN_RUN if m in loaded_again] == []
    # the store was closed before the process ended: its log is checkpointed and removed
    db = tmp_path / "home" / "qualspec.db"
    assert db.is_file()
    assert not Path(f"{db}-wal").exists()
    assert list((tmp_path / "results").glob("*.json"))


def test_a_resumed_run_loads_no_sqlalchemy(tmp_path: Path) -> None:
    modules_file = tmp_path / "modules.json"
    prelude = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: open({str(modules_file)!r}, 'w').write("
        "json.dumps(sorted(sys.modules))))"
    )
    with FakeServer(log_requests=False) as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(
            "name: resumed\n"
            "providers:\n"
            f'  fake: {{type: openai, base_url: "{server.base_url}", api_key_env: FAKE_KEY}}\n'
            "candidates: [{name: c, model: fake/model-a}]\n"
            "judge: {model: fake/judge, threshold: 7}\n"
            "scenarios:\n"
            "  - name: s\n"
            '    prompt: "question {{ i }}"\n'
            "    criteria: [answers the question]\n"
            "    inputs: [{i: 1}, {i: 2}, {i: 3}]\n",
            encoding="utf-8",
        )
        first = _script(["run", str(suite), "--no-calibration"], tmp_path, prelude)
        assert first.returncode == 0, first.stdout + first.stderr
        # as if it was interrupted after two answers and one judgment
        conn = sqlite3.connect(tmp_path / "home" / "qualspec.db")
        with conn:
            conn.execute("UPDATE runs SET status = 'interrupted'")
            conn.execute("DELETE FROM judgments WHERE id > 1")
            conn.execute("DELETE FROM responses WHERE id > 2")
        conn.close()
        resumed = _script(["run", str(suite), "--no-calibration", "--resume"], tmp_path, prelude)
        loaded = set(json.loads(modules_file.read_text(encoding="utf-8")))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "Responses: 3" in resumed.stdout, resumed.stdout
    assert "sqlalchemy" not in loaded and "alembic" not in loaded


def test_the_script_ends_after_atexit_handlers_with_its_output_and_exit_code(
    tmp_path: Path,
) -> None:
    prelude = "import atexit\natexit.register(lambda: print('atexit ran'))"
    listed = _script(["runs", "list"], tmp_path, prelude)
    assert listed.returncode == 0, listed.stderr
    assert "No runs recorded yet" in listed.stdout
    assert listed.stdout.rstrip().endswith("atexit ran")
    missing = _script(["run", str(tmp_path / "missing.yaml")], tmp_path, prelude)
    assert missing.returncode == 2
    assert "missing.yaml" in missing.stderr
    assert missing.stdout.rstrip().endswith("atexit ran")


def test_the_script_skips_the_interpreters_teardown(tmp_path: Path) -> None:
    # an object still alive at the end is finalized by a normal interpreter exit, not here
    prelude = (
        "import sys\n"
        "class Late:\n"
        "    def __del__(self):\n"
        "        sys.stdout.write('torn down\\n')\n"
        "late = Late()"
    )
    result = _script(["runs", "list"], tmp_path, prelude)
    assert result.returncode == 0, result.stderr
    assert "No runs recorded yet" in result.stdout
    assert "torn down" not in result.stdout


def test_main_called_from_python_raises_system_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUALSPEC_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("QUALSPEC_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["runs", "list"])
    assert exited.value.code == 0
