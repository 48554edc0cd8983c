"""The results viewer at size: time to first byte and size of a run's page in `qualspec
serve`, for an 80-answer run (the baseline), a 2,000-answer run and a 100,000-answer run.

    python benchmarks/viewer.py [--large 100000] [--no-engine] [--repeats 3] [--with-extra]

The runs have the shape of ``bench_runs.write_suite`` (2 candidates x 2 roles x 5
scenarios x rows x 4 temperatures x 5 runs, a criterion and an ``expect:`` check per
answer, about a quarter of the answers failing). The 2,000-answer run is made by `qualspec
run` on the fake server (through the engine, as a user makes it: the analysis it prints and
the page's snapshot are kept in the store); ``--no-engine``, the 80-answer run and the
100,000-answer run are written straight into the store (the engine would take minutes for
200,000 calls), and their analysis (up to 5,000 answers) and page snapshot then kept as
`qualspec run` does at its end (timed; the snapshot is built in a child process, whose
peak RSS is printed). The stability score is lexical (the embeddings extra hidden from every
process) unless ``--with-extra``. Each page is fetched from `qualspec serve` in its own
process:

* first view: a fresh server, the run never viewed (its snapshot as the run left it);
* first view, snapshot built: the same with the kept analysis and snapshot removed first
  (the server loads the whole run once, then keeps its snapshot);
* repeated view: the same server again (median of ``--repeats``);
* failed only: the page's "failed only" filter (``?failed=1``), first asked of a fresh
  server (cold) and then again (warm).

Time to first byte is from sending the request to the first byte of the body; sizes are
as sent with ``Accept-Encoding: gzip`` and uncompressed. Ratios are against the 80-answer
run's page measured in the same run. Goals: at 2,000 answers the first view under 1 s and
a repeated one under 0.2 s; the 100,000-answer page under 2 s, its failed-only view about
as fast.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import http.client
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_runs as runs  # noqa: E402 - the benchmarks' own helpers, beside this file


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    """`qualspec serve --db` in its own process."""

    def __init__(self, db: str, env: dict[str, str], extra: bool) -> None:
        self.port = free_port()
        argv = [*runs.qualspec_argv(extra), "serve", "--db", db, "--port", str(self.port)]
        self.proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                self.fetch("/runs")
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("qualspec serve did not start") from None
                time.sleep(0.2)

    def fetch(self, path: str, gzipped: bool = True) -> tuple[float, float, int, int]:
        """(seconds to the first byte, to the last, bytes sent, bytes uncompressed)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        headers = {"Accept-Encoding": "gzip" if gzipped else "identity"}
        start = time.perf_counter()
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        first = resp.read(1)
        ttfb = time.perf_counter() - start
        body = first + resp.read()
        total = time.perf_counter() - start
        if resp.status != 200:
            raise RuntimeError(f"GET {path}: {resp.status}")
        plain = gzip.decompress(body) if resp.getheader("Content-Encoding") == "gzip" else body
        conn.close()
        return ttfb, total, len(body), len(plain)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def forget_analysis(db: str) -> None:
    """Drop the kept analyses and page snapshots."""
    from qualspec.store import Store

    with Store(db) as store:
        store.cache_clear(kind="analysis")
        store.cache_clear(kind="view")


@dataclasses.dataclass(frozen=True)
class Views:
    first: float  # time to first byte, fresh server, snapshot as left by the run
    computed: float  # the same with the kept analysis and snapshot removed first
    again: float  # repeated view (median)
    failed: float  # "failed only", a fresh server (cold)
    failed_again: float  # "failed only" again (warm)
    gzip_bytes: int
    plain_bytes: int


_KEEP_VIEW = """
import resource, sys, time
from qualspec.store import Store
from qualspec.web import keep_run_view
with Store(sys.argv[1]) as store:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    keep_run_view(store, sys.argv[2])
    took = time.perf_counter() - start
print(took, before / 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def keep_view_child(db: str, run_id: str) -> tuple[float, float, float]:
    """The page snapshot built and kept as `qualspec run` keeps it at the end of a run
    (streamed from the store in parts), in a child process of its own: (seconds, peak RSS
    in MB before the build, peak RSS in MB after it)."""
    out = subprocess.run(
        [sys.executable, "-c", _KEEP_VIEW, db, run_id],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def keep_analysis(db: str, run_id: str, extra: bool, answers: int) -> str:
    """What `qualspec run` does at its end: up to 5,000 work items, the run's analysis
    computed and kept (timed here); then the page snapshot kept, in a child process (timed,
    with its peak RSS). What it did, in words."""
    from qualspec.analysis import stored_analysis
    from qualspec.store import Store

    said = []
    if answers <= 5000:  # a larger run is summarised: no analysis at its end
        start = time.perf_counter()
        with Store(db) as store:
            similarity = None if extra else "lexical"
            stored_analysis(store, store.load_run(run_id), similarity=similarity)
        said.append(f"analysis kept in {time.perf_counter() - start:.1f} s")
    took, before, peak = keep_view_child(db, run_id)
    said.append(
        f"page snapshot built from the store in parts and kept in {took:.1f} s "
        f"(peak RSS {peak:.0f} MB, {peak - before:+.0f} MB over the process before the build)"
    )
    return ", ".join(said)


def view(db: str, run_id: str, env: dict[str, str], repeats: int, extra: bool) -> Views:
    page = f"/runs/{run_id}"
    server = Served(db, env, extra)
    try:
        first = server.fetch(page)
        again = [server.fetch(page) for _ in range(repeats)]
    finally:
        server.close()
    server = Served(db, env, extra)
    try:
        failed = server.fetch(f"{page}?failed=1")
        failed_again = server.fetch(f"{page}?failed=1&page=2")
    finally:
        server.close()
    forget_analysis(db)
    server = Served(db, env, extra)
    try:
        computed = server.fetch(page)
    finally:
        server.close()
    return Views(
        first=first[0],
        computed=computed[0],
        again=statistics.median(a[0] for a in again),
        failed=failed[0],
        failed_again=failed_again[0],
        gzip_bytes=first[2],
        plain_bytes=first[3],
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--large", type=int, default=100_000, help="answers of the large run")
    parser.add_argument("--no-engine", action="store_true", help="write the 2,000 directly")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument(
        "--with-extra",
        action="store_true",
        help="stability by the embeddings extra (default: lexical, the extra hidden)",
    )
    args = parser.parse_args()
    extra = args.with_extra
    per_row = len(runs.CANDIDATES) * len(runs.ROLES) * len(runs.TEMPERATURES) * runs.RUNS
    work = Path(tempfile.mkdtemp(prefix="qualspec-viewer-bench-"))
    env = {**os.environ, "BENCH_KEY": "bench", "QUALSPEC_HOME": str(work / ".qualspec")}
    env.pop("QUALSPEC_DATABASE_URL", None)
    results: dict[int, Views] = {}
    large_rows = max(1, args.large // (per_row * len(runs.SCENARIOS)))
    # (answers, rows per scenario, scenarios, written straight to the store)
    sizes = [(per_row, 1, runs.SCENARIOS[:1], True)]
    sizes.append((per_row * 5 * 5, 5, runs.SCENARIOS, args.no_engine))
    sizes.append((per_row * 5 * large_rows, large_rows, runs.SCENARIOS, True))
    try:
        for answers, rows, scenarios, direct in sizes:
            db = f"sqlite:///{work / f'run-{answers}.db'}"
            start = time.perf_counter()
            if direct:
                run_id = runs.write_run_direct(db, rows, scenarios)
                kept = keep_analysis(db, run_id, extra, answers)
                how = f"written to the store; {kept};"
            else:
                server, base_url = runs.start_server(0.0)
                try:
                    run_id = runs.build_run(work / f"engine-{answers}", db, base_url, rows, extra)
                finally:
                    runs.stop_server(server)
                how = "qualspec run on the fake server"
            print(f"{answers:,} answers: {how} in {time.perf_counter() - start:.1f} s", flush=True)
            results[answers] = view(db, run_id, env, args.repeats, extra)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    base = results[per_row]
    print(
        f"\nrun page of `qualspec serve`, time to first byte (ratio: to the {per_row}-answer run)"
    )
    for answers, r in results.items():
        print(
            f"{answers:>8,} answers: first view {r.first:.3f} s ({r.first / base.first:.1f}x), "
            f"snapshot built {r.computed:.3f} s ({r.computed / base.computed:.1f}x), "
            f"repeated {r.again:.3f} s ({r.again / base.again:.1f}x), failed only "
            f"{r.failed:.3f} s cold ({r.failed / base.failed:.1f}x), its page 2 "
            f"{r.failed_again:.3f} s warm, "
            f"{r.gzip_bytes / 1e3:,.0f} KB gzip, {r.plain_bytes / 1e6:.2f} MB uncompressed"
        )
    mid, large = results[sizes[1][0]], results[sizes[2][0]]
    print(
        f"goals: 2,000 answers first view < 1 s: {_met(mid.first < 1)} (snapshot built by "
        f"the server: {_met(mid.computed < 1)}), repeated < 0.2 s: {_met(mid.again < 0.2)}; "
        f"{sizes[2][0]:,} answers < 2 s: {_met(large.first < 2)}, failed only < 2 s: "
        f"{_met(large.failed < 2)}"
    )
    return 0


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


if __name__ == "__main__":
    sys.exit(main())
