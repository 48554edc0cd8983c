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
are printed too: unlike calls/s, they hardly move with the machine's load. Goals: peak RSS
<= 300 MB at every size, and calls/s >= 60% of bare. ``--rerun``: the largest size run again on its
database, every answer from the cache (goal: 0 calls, under 2 minutes at 1,000,000). The
fake server and the bare client are ``fake_calls``'s (shared with ``engine_throughput.py``).
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

from fake_calls import bare, qualspec_run_argv, server_calls, start_server, stop_server  # noqa: E402

_BARE_MAX = 100_000
_MILESTONES = (10_000, 100_000, 1_000_000, 10_000_000)


class Watch:
    """Samples a child's RSS (every 0.2 s) and the fake server's call count (every second)
    while it runs: the RSS when the calls pass 10k / 100k / 1M (to show it is flat), and a
    progress line every ``every`` seconds (so a run cut short still says how far it got)."""

    def __init__(self, pid: int, base_url: str, size: int, every: float) -> None:
        self.pid, self.base_url, self.size, self.every = pid, base_url, size, every
        self.peak = 0.0
        self.at: dict[int, tuple[float, float]] = {}  # calls -> (RSS then, peak so far)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._first = server_calls(base_url)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _rss(self) -> float | None:
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def _run(self) -> None:
        start = last_print = last_calls = time.perf_counter()
        while not self._stop.wait(0.2):
            rss = self._rss()
            if rss is None:
                return
            self.peak = max(self.peak, rss)
            now = time.perf_counter()
            if now - last_calls < 1.0:
                continue
            last_calls = now
            try:
                done = server_calls(self.base_url) - self._first
            except OSError:
                continue
            for mark in _MILESTONES:
                if mark <= self.size and done >= mark and mark not in self.at:
                    self.at[mark] = (rss, self.peak)
                    print(
                        f"  at {mark:>9,} calls: RSS {rss:6.1f} MB, peak so far "
                        f"{self.peak:6.1f} MB ({now - start:.0f} s)",
                        flush=True,
                    )
            if now - last_print >= self.every:
                last_print = now
                print(
                    f"  {done:>9,} calls in {now - start:6.0f} s "
                    f"({done / (now - start):6.1f}/s), RSS {rss:6.1f} MB",
                    flush=True,
                )


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


def run_child(
    suite: Path, db: Path, out: Path, args: argparse.Namespace, base_url: str, size: int
) -> dict[str, Any]:
    """One ``qualspec run`` in a child process: wall and CPU seconds, peak RSS (MB), the
    largest RSS sampled while it ran, the RSS as the calls passed 10k / 100k / 1M, and the
    line it printed of the calls made."""
    command = qualspec_run_argv(suite, db, out, "--max-concurrency", str(args.concurrency))
    if not args.judge:
        command.append("--no-judge")
    env = {**os.environ, "BENCH_KEY": "bench"}
    start = time.perf_counter()
    log = out.with_suffix(".log")
    with log.open("w", encoding="utf-8") as printed:
        child = subprocess.Popen(command, env=env, stdout=printed)
    with Watch(child.pid, base_url, size, args.progress_every) as watch:
        _, code, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(code)
    if child.returncode != 0:
        raise SystemExit(f"qualspec run failed with exit code {child.returncode}")
    calls = [line for line in log.read_text(encoding="utf-8").splitlines() if "Calls:" in line]
    return {
        "calls": calls[-1].strip() if calls else "",
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "sampled_rss_mb": watch.peak,
        "rss_at": {mark: round(rss, 1) for mark, (rss, _) in watch.at.items()},
    }


def parse_args() -> argparse.Namespace:
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
    parser.add_argument(
        "--workdir",
        default=None,
        help="keep the suites, results and the largest size's database here (default: a "
        "temporary folder, the databases deleted)",
    )
    parser.add_argument(
        "--rerun-only",
        action="store_true",
        help="only the cached rerun of --cells, on the database an earlier invocation with "
        "the same --workdir kept",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=0,
        help="the fake server's port (0: a free one); a --rerun-only needs the first "
        "invocation's (the cache is keyed by the endpoint)",
    )
    parser.add_argument(
        "--progress-every", type=float, default=60.0, help="seconds between progress lines"
    )
    return parser.parse_args()


def bare_rate(base_url: str, calls: int, concurrency: int) -> float:
    """The bare client's calls/s over ``calls`` calls."""
    begin = time.perf_counter()
    asyncio.run(bare(base_url, calls, concurrency, "Answer: question {}"))
    return calls / (time.perf_counter() - begin)


def rerun(
    suite: Path, tmp: Path, size: int, args: argparse.Namespace, base_url: str
) -> dict[str, Any]:
    """The cached rerun of ``size`` cells on the database of its first run (printed)."""
    again = run_child(suite, tmp / f"scale-{size}.db", tmp / "rerun.json", args, base_url, size)
    print(
        f"{size:>9} cells, cached rerun: {again['wall_s']:.1f} s wall, "
        f"{again['cpu_s']:.1f} s CPU, peak RSS {again['peak_rss_mb']:.1f} MB, "
        f"{size / again['wall_s']:.0f} cells/s; "
        f"{again['calls']} (goal: 0 calls, under 120 s)",
        flush=True,
    )
    return again


def measure(
    size: int, tmp: Path, args: argparse.Namespace, base_url: str, last: bool
) -> dict[str, Any]:
    """One size: the bare rate, the run (and after the largest, the bare rate again and
    with ``--rerun`` the cached rerun); its row, printed."""
    calls = min(size, args.bare_calls)
    before = bare_rate(base_url, calls, args.concurrency)
    print(f"  bare client: {before:.1f} calls/s over {calls:,} calls", flush=True)
    suite = write_suite(tmp, size, base_url)
    run = run_child(
        suite, tmp / f"scale-{size}.db", tmp / f"results-{size}.json", args, base_url, size
    )
    after = bare_rate(base_url, calls, args.concurrency) if last else before
    rate = size / run["wall_s"]  # cells answered per second, start to exit
    base = (before + after) / 2
    row = {
        "cells": size,
        "judge": args.judge,
        "peak_rss_mb": round(run["peak_rss_mb"], 1),
        "sampled_rss_mb": round(run["sampled_rss_mb"], 1),
        "rss_at_calls": run["rss_at"],
        "wall_s": round(run["wall_s"], 1),
        "cpu_s": round(run["cpu_s"], 1),
        "cells_per_s": round(rate, 1),
        "bare_calls_per_s": round(base, 1),
        "bare_before_after": [round(before, 1), round(after, 1)],
        "ratio_to_bare": round(rate / base, 2),
        "load": os.getloadavg()[0],
    }
    print(
        f"{size:>9} cells  peak RSS {row['peak_rss_mb']:7.1f} MB  "
        f"{rate:8.1f} cells/s  bare {base:8.1f} calls/s (before {before:.1f}, after "
        f"{after:.1f})  ratio {row['ratio_to_bare']:.2f}  ({row['wall_s']} s, "
        f"{1000 * row['cpu_s'] / size:.2f} ms CPU/cell, load {row['load']:.1f})",
        flush=True,
    )
    if args.rerun and last:
        rerun(suite, tmp, size, args, base_url)
    if not (args.workdir and last):
        (tmp / f"scale-{size}.db").unlink(missing_ok=True)
    (tmp / f"results-{size}.json").unlink(missing_ok=True)
    return row


def main() -> None:
    args = parse_args()
    cells = args.cells or (200_000 if args.judge else 1_000_000)
    sizes = sorted({*(int(s) for s in args.sizes.split(",") if s.strip()), cells})
    sizes = [s for s in sizes if s <= cells]

    proc, base_url = start_server(args.latency, log=False, port=args.port)
    if args.workdir:
        tmp = Path(args.workdir)
        tmp.mkdir(parents=True, exist_ok=True)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="qualspec-scale-"))
    results = []
    try:
        asyncio.run(bare(base_url, 500, args.concurrency))  # warm up
        if args.rerun_only:
            if not (tmp / f"scale-{cells}.db").exists():
                raise SystemExit(f"{tmp / f'scale-{cells}.db'}: no database to rerun on")
            rerun(write_suite(tmp, cells, base_url), tmp, cells, args, base_url)
            return
        for size in sizes:
            results.append(measure(size, tmp, args, base_url, size == sizes[-1]))
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
