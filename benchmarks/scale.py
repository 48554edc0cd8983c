"""A suite of any size in constant memory: peak RSS and calls/s of ``qualspec run`` as the
number of cells grows, against a bare aiohttp client making the same calls.

    python benchmarks/scale.py [--cells 1000000] [--sizes 10000,100000] [--judge]
                               [--concurrency 64] [--latency 0] [--rerun]

One scenario over a generated CSV (one row per cell), ``--no-judge`` (or, with
``--judge``, the criteria judge on one criterion: 200,000 cells by default), the fake
server (``qualspec.testing.fakeserver``) in its own process at 0 ms, SQLite recording on.
Each size is one ``qualspec run`` in a child process on a fresh database; its RSS is
sampled while it runs and its peak is the kernel's (``ru_maxrss`` of the child). The bare
client makes the same calls (as many as the run, at most 100,000: its rate is steady by
then) in the same invocation, alternating with the runs. The run's CPU seconds per cell
are printed too: unlike calls/s, they hardly move with the machine's load. Goals: peak
RSS <= 300 MB at every size, and calls/s >= 60% of bare. ``--rerun``: the largest size
run again on its database, every answer from the cache (goal: 0 calls, under 2 minutes at
1,000,000). The fake server and the bare client are ``fake_calls``'s (shared with
``engine_throughput.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_calls import bare, start_server, stop_server  # noqa: E402 - beside this file

_BARE_MAX = 100_000


def write_suite(tmp: Path, cells: int, base_url: str) -> Path:
    """A suite of one scenario over a CSV of ``cells`` rows."""
    rows = tmp / f"rows-{cells}.csv"
    with rows.open("w", encoding="utf-8") as out:
        out.write("id,q\n")
        for i in range(cells):
            out.write(f"r{i},question {i}\n")
    suite = tmp / f"scale-{cells}.yaml"
    suite.write_text(
        "name: scale\n"
        "providers:\n"
        f"  bench: {{type: openai, base_url: '{base_url}', api_key_env: BENCH_KEY}}\n"
        "candidates: [{name: fake, model: bench/fake}]\n"
        "judge: {model: bench/judge}\n"
        "scenarios:\n"
        "  - name: q\n"
        "    prompt: 'Answer: {{ q }}'\n"
        f"    inputs: {rows.name}\n"
        "    criteria: [Answers the question.]\n",
        encoding="utf-8",
    )
    return suite


def run_child(suite: Path, db: Path, out: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One ``qualspec run`` in a child process: wall and CPU seconds, peak RSS (MB), the
    largest RSS sampled while it ran, and the line it printed of the calls made."""
    command = [
        sys.executable,
        "-c",
        "from qualspec.cli import main; main()",
        "run",
        str(suite),
        "--db",
        f"sqlite:///{db}",
        "--output",
        str(out),
        "--quiet",
        "--no-calibration",
        "--max-concurrency",
        str(args.concurrency),
    ]
    if not args.judge:
        command.append("--no-judge")
    env = {**os.environ, "BENCH_KEY": "bench"}
    start = time.perf_counter()
    log = out.with_suffix(".log")
    with log.open("w", encoding="utf-8") as printed:
        child = subprocess.Popen(command, env=env, stdout=printed)
    sampled = [0.0]
    stop = threading.Event()

    def sample() -> None:
        status = Path(f"/proc/{child.pid}/status")
        while not stop.wait(0.2):
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        sampled[0] = max(sampled[0], int(line.split()[1]) / 1024)
            except OSError:
                return

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    _, code, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    stop.set()
    watcher.join()
    child.returncode = os.waitstatus_to_exitcode(code)
    if child.returncode != 0:
        raise SystemExit(f"qualspec run failed with exit code {child.returncode}")
    calls = [line for line in log.read_text(encoding="utf-8").splitlines() if "Calls:" in line]
    return {
        "calls": calls[-1].strip() if calls else "",
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "sampled_rss_mb": sampled[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=None, help="N (default 1,000,000)")
    parser.add_argument("--sizes", default="10000,100000", help="smaller sizes measured first")
    parser.add_argument("--judge", action="store_true", help="the criteria judge on (200,000)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument(
        "--bare-calls",
        type=int,
        default=_BARE_MAX,
        help=f"at most this many calls by the bare client per size (default {_BARE_MAX:,})",
    )
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="then run the largest size again on its database: every answer cached",
    )
    args = parser.parse_args()
    cells = args.cells or (200_000 if args.judge else 1_000_000)
    sizes = sorted({*(int(s) for s in args.sizes.split(",") if s.strip()), cells})
    sizes = [s for s in sizes if s <= cells]

    proc, base_url = start_server(args.latency, log=False)
    tmp = Path(tempfile.mkdtemp(prefix="qualspec-scale-"))
    results = []
    try:
        asyncio.run(bare(base_url, 500, args.concurrency))  # warm up
        for size in sizes:
            calls = min(size, args.bare_calls)
            begin = time.perf_counter()
            asyncio.run(bare(base_url, calls, args.concurrency, "Answer: question {}"))
            bare_rate = calls / (time.perf_counter() - begin)
            suite = write_suite(tmp, size, base_url)
            run = run_child(suite, tmp / f"scale-{size}.db", tmp / f"results-{size}.json", args)
            rate = size / run["wall_s"]  # cells answered per second, start to exit
            row = {
                "cells": size,
                "judge": args.judge,
                "peak_rss_mb": round(run["peak_rss_mb"], 1),
                "sampled_rss_mb": round(run["sampled_rss_mb"], 1),
                "wall_s": round(run["wall_s"], 1),
                "cpu_s": round(run["cpu_s"], 1),
                "cells_per_s": round(rate, 1),
                "bare_calls_per_s": round(bare_rate, 1),
                "ratio_to_bare": round(rate / bare_rate, 2),
            }
            results.append(row)
            print(
                f"{size:>9} cells  peak RSS {row['peak_rss_mb']:7.1f} MB  "
                f"{rate:8.1f} cells/s  bare {bare_rate:8.1f} calls/s  "
                f"ratio {row['ratio_to_bare']:.2f}  ({row['wall_s']} s, "
                f"{1000 * run['cpu_s'] / size:.2f} ms CPU/cell)",
                flush=True,
            )
            if args.rerun and size == sizes[-1]:
                again = run_child(suite, tmp / f"scale-{size}.db", tmp / "rerun.json", args)
                print(
                    f"{size:>9} cells, cached rerun: {again['wall_s']:.1f} s wall, "
                    f"{again['cpu_s']:.1f} s CPU, peak RSS {again['peak_rss_mb']:.1f} MB; "
                    f"{again['calls']} (goal: 0 calls, under 120 s)",
                    flush=True,
                )
            (tmp / f"scale-{size}.db").unlink(missing_ok=True)
            (tmp / f"results-{size}.json").unlink(missing_ok=True)
    finally:
        stop_server(proc)
    worst = max(r["peak_rss_mb"] for r in results)
    print(
        f"peak RSS at most {worst:.1f} MB (goal <= 300); ratio to bare at "
        f"{results[-1]['cells']} cells {results[-1]['ratio_to_bare']:.2f} (goal >= 0.6)"
    )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
