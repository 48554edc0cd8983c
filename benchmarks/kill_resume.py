"""A ``kill -9`` half way through a large run, then ``--resume``: what it costs in calls.

    python benchmarks/kill_resume.py [--cells 200000] [--at 0.5] [--concurrency 64]
                                     [--judge] [--latency 0]

The suite of ``scale.py`` (one scenario over a generated CSV, ``--no-judge`` unless
``--judge``), the fake server in its own process, SQLite recording on. The run is killed
(SIGKILL) once the fake server has counted ``--at`` of the planned calls (its ``/_stats``,
read every 20 ms: the kill point is a call count, not a time; the server keeps answering,
so the calls in flight and the answers not yet committed are what the kill loses), then
``qualspec run --resume`` finishes it. Printed: the calls before the kill, the calls of
the resume, the total against planned + ``--max-concurrency`` (the goal), the store's
responses of the run (count and count of distinct keys: one per cell), and each run's
wall time and peak RSS. The same check at 5,200 cells is a test
(``tests/engine/test_resume_kill_streamed.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_calls import server_calls, start_server, stop_server  # noqa: E402 - beside this file
from scale import write_suite  # noqa: E402


def _argv(suite: Path, db: Path, args: argparse.Namespace, *extra: str) -> list[str]:
    command = [sys.executable, "-c", "from qualspec.cli import main; main()", "run", str(suite)]
    command += ["--db", f"sqlite:///{db}", "--quiet", "--no-calibration"]
    command += ["--max-concurrency", str(args.concurrency), *extra]
    return command if args.judge else [*command, "--no-judge"]


def _wait(child: subprocess.Popen[bytes], start: float) -> dict[str, Any]:
    """Reap ``child``: its exit code, wall seconds and peak RSS (MB)."""
    _, code, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(code)
    return {
        "code": child.returncode,
        "wall_s": round(time.perf_counter() - start, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
    }


def killed_run(command: list[str], base_url: str, kill_at: int, log: Path) -> dict[str, Any]:
    """Start the run, SIGKILL it once the server has counted ``kill_at`` calls."""
    env = {**os.environ, "BENCH_KEY": "bench"}
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as printed:
        child = subprocess.Popen(command, env=env, stdout=printed, stderr=subprocess.STDOUT)
    seen = 0
    while child.poll() is None:
        seen = server_calls(base_url)
        if seen >= kill_at:
            child.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    if child.returncode is not None:  # reaped by poll(): it ended by itself
        raise SystemExit(f"the run ended (code {child.returncode}) before the kill: see {log}")
    result = _wait(child, start)
    if result["code"] != -signal.SIGKILL:
        raise SystemExit(f"the run ended (code {result['code']}) before the kill: see {log}")
    return {**result, "calls_seen_at_kill": seen}


def resumed_run(command: list[str], log: Path) -> dict[str, Any]:
    """Run ``--resume`` to its end; its printed lines are kept in ``log``."""
    env = {**os.environ, "BENCH_KEY": "bench"}
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as printed:
        child = subprocess.Popen(command, env=env, stdout=printed, stderr=subprocess.STDOUT)
    result = _wait(child, start)
    if result["code"] != 0:
        raise SystemExit(f"the resume failed with exit code {result['code']}: see {log}")
    return result


def store_counts(db: Path) -> dict[str, Any]:
    """The one run's current responses (count, distinct keys) and judgments, and its status."""
    conn = sqlite3.connect(db)
    try:
        ((run_id, status),) = conn.execute("SELECT id, status FROM runs").fetchall()
        live = "run_id = ? AND NOT superseded"
        count, distinct = conn.execute(
            f"SELECT count(*), count(DISTINCT key) FROM responses WHERE {live}",  # noqa: S608
            (run_id,),
        ).fetchone()
        judged = conn.execute(
            f"SELECT count(*), count(DISTINCT response_key) FROM judgments WHERE {live}",  # noqa: S608
            (run_id,),
        ).fetchone()
    finally:
        conn.close()
    return {
        "status": status,
        "responses": count,
        "distinct_keys": distinct,
        "judgments": judged[0],
        "judged_responses": judged[1],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=200_000)
    parser.add_argument("--at", type=float, default=0.5, help="kill at this share of calls")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--judge", action="store_true", help="the criteria judge on")
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    planned = args.cells * (2 if args.judge else 1)
    kill_at = int(planned * args.at)
    proc, base_url = start_server(args.latency, log=False)
    tmp = Path(tempfile.mkdtemp(prefix="qualspec-kill-"))
    db = tmp / "kill.db"
    try:
        suite = write_suite(tmp, args.cells, base_url)
        first = killed_run(_argv(suite, db, args), base_url, kill_at, tmp / "killed.log")
        time.sleep(1.0)  # requests still in the kernel's buffers reach the server
        before = server_calls(base_url)
        out = tmp / "results.json"
        again = resumed_run(
            _argv(suite, db, args, "--resume", "--output", str(out)), tmp / "resumed.log"
        )
        after = server_calls(base_url) - before
        counts = store_counts(db)
    finally:
        stop_server(proc)
    total, limit = before + after, planned + args.concurrency
    per_cell = counts["responses"] == counts["distinct_keys"] == args.cells
    print(
        f"{args.cells:,} cells, {planned:,} planned calls, --max-concurrency "
        f"{args.concurrency}: killed at {first['calls_seen_at_kill']:,} calls seen "
        f"({first['wall_s']} s, peak RSS {first['peak_rss_mb']} MB)\n"
        f"calls before the kill {before:,}; calls of the resume {after:,} "
        f"({again['wall_s']} s, peak RSS {again['peak_rss_mb']} MB)\n"
        f"total {total:,} vs planned + concurrency {limit:,}: "
        f"{'ok' if total <= limit else 'OVER'} ({total - planned} calls lost to the kill)\n"
        f"store: run {counts['status']}, {counts['responses']:,} responses, "
        f"{counts['distinct_keys']:,} distinct keys: "
        f"{'one response per cell' if per_cell else 'NOT one per cell'}"
        + (f"; {counts['judgments']:,} judgments" if args.judge else ""),
        flush=True,
    )
    row = {"cells": args.cells, "planned": planned, "concurrency": args.concurrency}
    row |= {"before": before, "after": after, "total": total, "limit": limit}
    print(json.dumps(row | {"killed": first, "resumed": again, "store": counts}))
    shutil.rmtree(tmp)  # kept when a run failed: its log is named in the message


if __name__ == "__main__":
    main()
