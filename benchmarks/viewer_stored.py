"""The run page of runs written straight into the store, their snapshot kept as `qualspec
run` keeps it (``qualspec.web.keep_run_view``): time to the first byte of `qualspec serve`.

    python benchmarks/viewer_stored.py [--rows 5 250] [--dir DIR]

``--rows N``: a run of 400 x N answers (``bench_runs.write_run_direct``: 5 is 2,000, 250 is
100,000, 500 is 200,000), written once into ``DIR`` (kept between calls). Per run: the
first view of a fresh server, the same page again (median of 3), another view (candidate
and sort), then a fresh server for "failed only" (cold), its page 2, and failed only with a
search.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_runs as runs  # noqa: E402 - the benchmarks' own helpers, beside this file
import viewer  # noqa: E402


def main() -> int:
    from qualspec.store import Store
    from qualspec.web import keep_run_view

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, nargs="+", default=[5, 250])
    parser.add_argument("--dir", default="/tmp/qualspec-viewer-stored")
    args = parser.parse_args()
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "QUALSPEC_HOME": str(work / "home")}
    env.pop("QUALSPEC_DATABASE_URL", None)
    for rows in args.rows:
        db = f"sqlite:///{work / f'run-{rows}.db'}"
        marker = work / f"run-{rows}.id"
        if not marker.exists():
            marker.write_text(runs.write_run_direct(db, rows))
        run_id = marker.read_text()
        start = time.perf_counter()
        with Store(db) as store:
            keep_run_view(store, run_id)
            answers = store.get_run(run_id).n_responses
        kept = time.perf_counter() - start
        page = f"/runs/{run_id}"
        server = viewer.Served(db, env, False)
        try:
            first = server.fetch(page)
            again = statistics.median(server.fetch(page)[0] for _ in range(3))
            other = server.fetch(f"{page}?candidate=gpt_large&sort=score")
        finally:
            server.close()
        server = viewer.Served(db, env, False)
        try:
            failed = server.fetch(f"{page}?failed=1")
            failed2 = server.fetch(f"{page}?failed=1&page=2")
            search = server.fetch(f"{page}?failed=1&q=edges")
        finally:
            server.close()
        print(
            f"{answers:,} answers (snapshot kept in {kept:.1f} s): first view {first[0]:.3f} s, "
            f"repeated {again:.3f} s, another view {other[0]:.3f} s; failed only cold "
            f"{failed[0]:.3f} s, its page 2 {failed2[0]:.3f} s, failed and a search "
            f"{search[0]:.3f} s; page {first[2] / 1e3:.0f} KB gzip / {first[3] / 1e6:.2f} MB",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
