"""The benchmarks run: a tiny smoke of each, checking only that it completes and reports.

No timing is asserted here: speed targets are measured and printed by the benchmarks
themselves, as ratios against a baseline taken in the same run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _bench(
    repo_root: Path, name: str, *args: str, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """``python benchmarks/NAME ARGS`` from the repository's root, its output captured."""
    script = repo_root / "benchmarks" / name
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_process_workload_quick_runs_and_prints_the_ratios(repo_root: Path) -> None:
    done = _bench(repo_root, "process_workload.py", "--quick")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    for prefix in (
        "bare asyncio+aiohttp",
        "qualspec run",
        "wall ratio:",
        "client cpu:",
        "peak rss:",
    ):
        assert any(line.startswith(prefix) for line in out.splitlines()), out


def test_yaml_limits_quick_runs_and_refuses_every_bomb(repo_root: Path) -> None:
    done = _bench(repo_root, "yaml_limits.py", "--quick")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if " in the " in line]
    assert len(rows) == 6, done.stdout
    assert all(row.split()[-4] == "yes" for row in rows), done.stdout  # every bomb refused
    assert any(line.startswith("normal suite") for line in done.stdout.splitlines())


def test_panel_cost_runs_and_counts_three_judges_calls(repo_root: Path) -> None:
    done = _bench(repo_root, "panel_cost.py", "--inputs", "4", "--repeats", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Panel / single: judge calls 3.00x, all calls 2.00x, wall " in done.stdout


def test_kill_resume_kills_at_half_and_the_resume_answers_each_cell_once(repo_root: Path) -> None:
    done = _bench(repo_root, "kill_resume.py", "--cells", "600", "--concurrency", "8", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "killed at " in out and "calls of the resume " in out, out
    assert "vs planned + concurrency 608: ok" in out, out
    assert "600 responses, 600 distinct keys: one response per cell" in out, out


def test_http_client_runs_and_prints_the_lean_clients_ratio(repo_root: Path) -> None:
    done = _bench(repo_root, "http_client.py", "--calls", "300", "--repeats", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for client in ("provider, lean", "provider, aiohttp", "bare aiohttp"):
        assert any(line.startswith(f"median {client:>17}") for line in lines), done.stdout
    assert any(line.startswith("the provider's CPU a call, lean / aiohttp:") for line in lines)
