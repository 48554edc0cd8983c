"""``qualspec test list|run`` as a user runs them: the built-ins, a third-party test that a
small package registers through the ``qualspec.tests`` entry point (installed by pip, offline),
and test runs read by ``runs list``, ``runs show`` and ``diff``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualspec.testing import FakeServer

CLI = (sys.executable, "-c", "from qualspec.cli import main; main()")

PLUGIN_PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "qualspec-demo-test"
version = "0.1.0"

[project.entry-points."qualspec.tests"]
echo_length = "qualspec_demo_test:EchoLength"
"""

PLUGIN_MODULE = '''\
"""A third-party test: how many words each answer has."""

from qualspec.testkit import PromptResponseTest, TestItem


class EchoLength(PromptResponseTest):
    name = "echo_length"
    description = "counts the words of each answer (a third-party test)"
    max_tokens = 20

    def make_test_items(self):
        return [TestItem(["Say one word."], context=1), TestItem(["Say two words."], context=2)]

    def measure_quality(self, item):
        return {"words": float(len(item.texts[0].split()))}
'''


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(answer=lambda body: "nurse" if "She is" in str(body) else "doctor") as srv:
        yield srv


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def _env(tmp_path: Path, server: FakeServer, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "QUALSPEC_HOME": str(tmp_path / "home"),
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "test-key",
        "COLUMNS": "200",
        **extra,
    }


def _json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_third_party_test_installed_with_its_entry_point_is_listed_and_runs(
    server: FakeServer, tmp_path: Path
) -> None:
    package = tmp_path / "demo"
    package.mkdir()
    (package / "pyproject.toml").write_text(PLUGIN_PYPROJECT)
    (package / "qualspec_demo_test.py").write_text(PLUGIN_MODULE)
    target = tmp_path / "site"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(package),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert install.returncode == 0, install.stderr
    env = _env(tmp_path, server, PYTHONPATH=str(target))
    listed = _cli(["test", "list"], env, tmp_path)
    assert listed.returncode == 0, listed.stderr
    for name in ("echo_length", "gender_stereotype", "refusal", "multiple_choice"):
        assert name in listed.stdout
    assert "counts the words of each answer" in listed.stdout
    ran = _json(_cli(["test", "run", "echo_length", "--sut", "openai/m", "--json"], env, tmp_path))
    assert ran["status"] == "finished"
    assert ran["results"] == {"openai/m": {"words": 1.0}}  # "doctor", twice
    assert server.calls == 2
    # without the package on the path the test is unknown: one line, exit 2
    missing = _cli(
        ["test", "run", "echo_length", "--sut", "openai/m"], _env(tmp_path, server), tmp_path
    )
    assert missing.returncode == 2
    assert missing.stderr.strip().count("\n") == 0
    assert "unknown test 'echo_length'" in missing.stderr and "Traceback" not in missing.stderr


def test_a_test_run_is_a_stored_run_for_runs_and_diff(server: FakeServer, tmp_path: Path) -> None:
    env = _env(tmp_path, server)
    args = ["test", "run", "gender_stereotype", "--sut", "openai/a", "--limit", "1"]
    shown = _cli(args, env, tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "gender_stereotype" in shown.stdout and "medical_profession_stereotype" in shown.stdout
    first = _json(_cli([*args, "--json"], env, tmp_path))  # answered from the cache
    assert first["results"]["openai/a"]["gender_stereotype"] == 1.0  # nurse, doctor, doctor
    assert server.calls == 3
    second = _json(_cli([*args, "--json", "--refresh"], env, tmp_path))
    assert server.calls == 6
    listed = _cli(["runs", "list", "--suite", "gender_stereotype"], env, tmp_path)
    assert listed.returncode == 0 and first["run_id"] in listed.stdout
    report = _cli(["runs", "show", first["run_id"]], env, tmp_path)
    assert report.returncode == 0, report.stderr
    assert "medical_profession/p1" in report.stdout
    assert "Test results: openai/a: gender_stereotype 1," in report.stdout
    diff = _cli(["diff", first["run_id"], second["run_id"]], env, tmp_path)
    assert diff.returncode == 0, diff.stderr
    assert "regression: no" in diff.stdout
    exported = _cli(["runs", "export", first["run_id"], "--format", "json"], env, tmp_path)
    data = json.loads(exported.stdout)
    assert data["run"]["metadata"]["test"]["results"]["openai/a"]["gender_stereotype"] == 1.0


def test_bad_test_run_input_is_one_line_and_exit_2(server: FakeServer, tmp_path: Path) -> None:
    env = _env(tmp_path, server)
    for args, needle in [
        (
            ["test", "run", "gender_stereotyp", "--sut", "openai/a"],
            "did you mean 'gender_stereotype'",
        ),
        (["test", "run", "nosuch.module:Test", "--sut", "openai/a"], "cannot be loaded"),
        (["test", "run", "refusal", "--sut", "nosuchprovider/x"], "--sut nosuchprovider/x: "),
        (["test", "run", "refusal", "--sut", "bad"], "--sut bad: model address 'bad' needs"),
    ]:
        result = _cli(args, env, tmp_path)
        assert result.returncode == 2, (args, result.stderr)
        assert needle in result.stderr and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert server.calls == 0
