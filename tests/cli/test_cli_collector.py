"""``qualspec run``'s start-up and end make no garbage collection; the run collects as usual.

The start-up (imports, the suite, the plan) builds objects that live until the process
ends and almost no garbage: a collection there walked them all for nothing; so did one
just before the process ends (after the report is printed). The run is
observed as a process (the script, ``main()``), with a ``gc.callbacks`` hook that notes,
for each collection on the main thread, whether the run had started (its first thread:
the store is opened off the event loop).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from qualspec.testing import FakeServer

PRELUDE = """
import atexit, gc, json, sys, threading
import qualspec.cli  # imported before the hook: what is measured is main()

seen, started, ended, printing = [], [], [], []
thread_start = threading.Thread.start

def start(thread):  # the run's first thread: the store, opened off the event loop
    if thread.name != "qualspec-prefetch":  # the start-up's own: imports aiohttp beside it
        started.append(gc.isenabled())
    thread_start(thread)

threading.Thread.start = start
write = sys.stdout.write

def noted(text):  # the report's last line: the command is done
    if text.startswith("Results:"):
        ended.append(True)
    printing.append(gc.isenabled())
    return write(text)

sys.stdout.write = noted

def note(phase, info):
    if phase == "start" and threading.current_thread() is threading.main_thread():
        seen.append("end" if ended else "run" if started else "start-up")

gc.callbacks.append(note)
seen_all = lambda: {"seen": seen, "enabled": started[:1], "printing": printing[:1]}
atexit.register(lambda: open(OUT, "w").write(json.dumps(seen_all())))
"""


def _suite(path: Path, base_url: str) -> Path:
    rows = ", ".join(f"{{i: {i}}}" for i in range(200))
    path.write_text(
        "name: collector\n"
        "providers:\n"
        f'  fake: {{type: openai, base_url: "{base_url}", api_key_env: FAKE_KEY}}\n'
        "candidates: [{name: c, model: fake/model-a}]\n"
        "judge: {model: fake/judge, threshold: 7}\n"
        "scenarios:\n"
        "  - name: s\n"
        '    prompt: "question {{ i }}"\n'
        "    criteria: [answers the question]\n"
        f"    inputs: [{rows}]\n",
        encoding="utf-8",
    )
    return path


def _observed(tmp_path: Path, *flags: str) -> tuple[str, dict[str, Any]]:
    """``qualspec run SUITE FLAGS`` as the script: its output and what the hooks saw."""
    out = tmp_path / "gc.json"
    code = f"OUT = {str(out)!r}\n{PRELUDE}\nfrom qualspec.cli import main\nmain()\n"
    env = dict(os.environ, QUALSPEC_HOME=str(tmp_path / "home"), FAKE_KEY="sk-test")
    env.pop("QUALSPEC_DATABASE_URL", None)
    with FakeServer(log_requests=False) as server:
        suite = _suite(tmp_path / "suite.yaml", server.base_url)
        result = subprocess.run(
            [sys.executable, "-c", code, "run", str(suite), *flags],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout, json.loads(out.read_text(encoding="utf-8"))


def test_the_start_up_of_a_run_makes_no_collection_and_the_run_collects(tmp_path: Path) -> None:
    stdout, observed = _observed(tmp_path)
    assert "Calls: 200 candidate, 200 judge" in stdout
    # no collection before the run's event loop started (imports, suite, plan)
    assert "start-up" not in observed["seen"], observed
    # nor after the report (the process ends: there is nothing worth collecting)
    assert "end" not in observed["seen"], observed
    # and the collector is on when the run starts (its first thread)
    assert observed["enabled"] == [True]


def test_a_dry_run_collects_as_usual_once_the_plan_is_made(tmp_path: Path) -> None:
    stdout, observed = _observed(tmp_path, "--dry-run")
    assert "200" in stdout
    assert "start-up" not in observed["seen"], observed
    # the collector is on when the dry run prints its plan (a large plan's walk collects)
    assert observed["printing"] == [True]
