"""The README's commands and code run as written (on the embedded model, no API key)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from qualspec.store import Store

BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def _blocks(readme: str, lang: str) -> list[str]:
    return [body for kind, body in BLOCK.findall(readme) if kind == lang]


def test_setup_commands_come_first_and_ci_runs_the_test_command(repo_root: Path) -> None:
    readme = (repo_root / "README.md").read_text()
    first = BLOCK.search(readme)
    assert first is not None and first.start() < readme.index("\n## ")
    lines = [line for line in first.group(2).splitlines() if line.strip()]
    assert len(lines) == 2
    assert (
        lines[0].startswith("pip install") and "qualspec run examples/quickstart.yaml" in lines[0]
    )
    assert lines[1].startswith("pip install") and "pytest" in lines[1]
    ci = (repo_root / ".ci" / "run").read_text().splitlines()
    assert lines[1] in ci, "the README's test command must be the one .ci/run runs"
    # and it ends with the ten slowest tests (pytest's addopts, so the command stays as is)
    ini = tomllib.loads((repo_root / "pyproject.toml").read_text())["tool"]["pytest"]
    assert "--durations=10" in ini["ini_options"]["addopts"].split() + lines[1].split()


def _sh(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    bindir = os.path.dirname(sys.executable)
    env = {**env, "PATH": f"{bindir}:{env.get('PATH', '')}"}
    # its own process group, so that a timeout ends the qualspec process too, not only the shell
    with subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        env=env,
        text=True,
        stdin=subprocess.DEVNULL,  # a command that asks (qualspec init) takes its defaults
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as proc:
        try:
            # a command on the embedded model (up to 100 calls with calibration and re-asks)
            # took over 15 minutes at a load average of 10 on 2 cores
            stdout, stderr = proc.communicate(timeout=1800)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)


@pytest.mark.timeout(3600)  # the embedded model on a busy 2-core machine is slow
def test_readme_commands_and_code_run(repo_root: Path, tmp_path: Path) -> None:
    readme = (repo_root / "README.md").read_text()
    shutil.copytree(repo_root / "examples", tmp_path / "examples")
    env = dict(os.environ)
    env["QUALSPEC_HOME"] = str(tmp_path / ".qualspec")
    env.pop("QUALSPEC_DATABASE_URL", None)

    setup = _blocks(readme, "bash")[0].splitlines()[0]
    first_run = setup.split("&&", 1)[1].strip()
    result = _sh(first_run + " --quiet", tmp_path, env)
    assert result.returncode == 0, result.stderr
    assert "SCENARIO: capital_of_france" in result.stdout
    db = f"sqlite:///{tmp_path / '.qualspec' / 'qualspec.db'}"
    with Store.open(db) as store:
        # the quickstart's run (its judge calibration is recorded in a session run of its own)
        (quick,) = [r for r in store.list_runs() if r.suite_name == "Quickstart"]
    results = sorted((tmp_path / "results").glob("quickstart_*.json"))
    assert len(results) == 1
    data = json.loads(results[0].read_text())
    assert data["schema_version"] == "1.2" and len(data["responses"]) == 8
    # the quickstart's expect: checks give true results on the embedded model: at least one
    # PASS (the capital names Paris at temperature 0) and one FAIL (no paragraph in 25 words)
    checks = [j for r in data["responses"] for j in r["judgments"] if j["evaluator"] == "expect"]
    assert len(checks) == 8 * 2
    assert any(j["passed"] is True for j in checks) and any(j["passed"] is False for j in checks)
    assert "check PASS" in result.stdout or "check FAIL" in result.stdout
    # the embedded judge's calibration verdict is measured and shown
    assert "Judge check: judge local/smollm2" in " ".join(result.stdout.split())
    assert data["run"]["metadata"]["judge_calibration"]["criteria"]["n_pairs"] == 4

    # A second version of one scenario prompt, for the history examples.
    suite = tmp_path / "examples" / "quickstart.yaml"
    suite.write_text(
        suite.read_text().replace(
            "What is the capital of France?", "Name the capital city of France."
        )
    )
    result = _sh(
        "qualspec run examples/quickstart.yaml --scenarios capital_of_france --temps 0 "
        "--quiet --output results/b.json",
        tmp_path,
        env,
    )
    assert result.returncode == 0, result.stderr
    shutil.copy(results[0], tmp_path / "results" / "a.json")
    with Store.open(db) as store:
        latest = store.list_runs(limit=1)[0].id

    substitutions = {"RUN_ID": quick.id, "RUN_A": quick.id, "RUN_B": latest}
    commands = [
        line.strip()
        for body in _blocks(readme, "bash")[1:]
        for line in body.splitlines()
        if line.strip().startswith("qualspec ")
    ]
    assert len(commands) >= 12
    for command in commands:
        for name, value in substitutions.items():
            command = re.sub(rf"\b{name}\b", value, command)
        result = _sh(command, tmp_path, env)
        # exit 1 is --fail-on-regression's answer when the embedded judge scored the edited
        # prompt lower: a result of the model, not an error of the command
        ok = (0, 1) if "--fail-on-regression" in command else (0,)
        assert result.returncode in ok, f"{command}\n{result.stdout}\n{result.stderr}"
        assert "Traceback" not in result.stderr

    assert json.loads((tmp_path / "qualspec-suite.schema.json").read_text())["properties"]
    csv_lines = (tmp_path / "run.csv").read_text().splitlines()
    assert len(csv_lines) > 8  # a header and one row per answer and criterion

    # Python code blocks run too (the library example uses the cache from the runs above).
    os.chdir(tmp_path)
    for code in _blocks(readme, "python"):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})


@pytest.fixture(autouse=True)
def _restore_cwd() -> object:
    cwd = os.getcwd()
    yield
    os.chdir(cwd)
