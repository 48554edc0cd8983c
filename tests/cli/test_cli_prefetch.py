"""``qualspec run`` imports the HTTP client beside the suite's loading (issue 18).

aiohttp's import loads the CA certificates twice (OpenSSL work with Python's lock
released): a run whose suite names an HTTP provider imports it on a background thread
from its first step, so that work overlaps the suite's loading. A dry run, or a suite
that names no HTTP provider, does not import it at all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from qualspec.testing import FakeServer

# records which thread first asked for aiohttp, and whether it was asked for at all
_PRELUDE = """
import atexit, sys, threading
seen = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "aiohttp" and not seen:
            seen.append(threading.current_thread().name)
        return None
sys.meta_path.insert(0, Watch())
atexit.register(lambda: print("aiohttp imported by:", seen[0] if seen else "nobody"))
"""


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QUALSPEC_HOME=str(cwd / "home"), FAKE_KEY="sk-test")
    env.pop("QUALSPEC_DATABASE_URL", None)
    code = f"{_PRELUDE}\nfrom qualspec.cli import main\nmain()\n"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _suite(path: Path, base_url: str, model: str = "fake/model-a") -> Path:
    path.write_text(
        "name: prefetch\n"
        "providers:\n"
        f'  fake: {{type: openai, base_url: "{base_url}", api_key_env: FAKE_KEY}}\n'
        f"candidates: [{{name: c, model: {model}}}]\n"
        "judge: {model: fake/judge, threshold: 7}\n"
        "scenarios:\n"
        "  - name: s\n"
        '    prompt: "question {{ i }}"\n'
        "    criteria: [answers the question]\n"
        "    inputs: [{i: 1}, {i: 2}]\n",
        encoding="utf-8",
    )
    return path


def test_a_run_on_an_http_provider_imports_aiohttp_on_a_background_thread(
    tmp_path: Path,
) -> None:
    with FakeServer(log_requests=False) as server:
        suite = _suite(tmp_path / "suite.yaml", server.base_url)
        result = _run(["run", str(suite), "--no-calibration"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Calls: 2 candidate, 2 judge" in result.stdout
    assert "aiohttp imported by: qualspec-prefetch" in result.stdout


def test_a_dry_run_imports_no_http_client(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite.yaml", "http://127.0.0.1:9/v1")
    result = _run(["run", str(suite), "--dry-run"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "aiohttp imported by: nobody" in result.stdout


def _no_http_suite(path: Path, judge: str) -> Path:
    """A suite on the embedded model (and ``judge``) whose candidate's provider is unknown:
    it fails its checks after loading, before any call (no model loaded)."""
    path.write_text(
        "name: local\n"
        f"candidates: [{{name: c, model: nowhere/model}}]\n{judge}"
        "scenarios: [{name: s, prompt: hi, criteria: [answers]}]\n",
        encoding="utf-8",
    )
    return path


def test_a_suite_that_names_no_http_provider_starts_no_import(tmp_path: Path) -> None:
    judge = "judge: {model: local/smollm2, threshold: 7}\n"
    suite = _no_http_suite(tmp_path / "suite.yaml", judge)
    result = _run(["run", str(suite)], tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "nowhere" in result.stderr
    assert "aiohttp imported by: nobody" in result.stdout


def test_a_judge_named_on_the_command_line_counts(tmp_path: Path) -> None:
    suite = _no_http_suite(tmp_path / "suite.yaml", "")
    result = _run(["run", str(suite), "--judge", "openai/gpt-4o-mini"], tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "aiohttp imported by: qualspec-prefetch" in result.stdout


def test_a_suite_that_is_not_a_regular_file_is_not_read_ahead(tmp_path: Path) -> None:
    # a named pipe read here would block (no writer), or leave nothing for the suite's
    # loading; the look ahead reads regular files only
    fifo = tmp_path / "suite.yaml"
    os.mkfifo(fifo)
    code = (
        "import argparse, sys\n"
        "from qualspec.cli._prefetch import prefetch_http\n"
        f"ns = argparse.Namespace(suite={str(fifo)!r}, dry_run=False, judge=None, model=None)\n"
        "print(prefetch_http(ns), 'aiohttp' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["None", "False"]
