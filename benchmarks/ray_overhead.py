"""Per-call overhead of the Ray executor against the local one, on the embedded model.

    python benchmarks/ray_overhead.py [--cells 24] [--max-tokens 16] [--repeats 2]

Runs the same suite (``--cells`` answers of ``local/smollm2``, no judge, no cache, one call
at a time, every answer recorded in SQLite) with ``executor="local"`` (llama.cpp in this
process) and ``executor="ray"`` (llama.cpp in one Ray actor of a Ray instance started on
this machine, started once and not timed), alternating, in one process. Each session
first answers one warm-up call (the model loaded; for Ray the actor started), which is not
timed. Prints the seconds per call of each, the overhead per call (ray - local) and the
ratio ray / local; with ``--repeats N`` the medians of N alternating pairs. Both run
llama.cpp on one thread (``QUALSPEC_LOCAL_THREADS=1``, the actor reserves one CPU), so the
difference is what Ray adds to a call: serialising the request and the answer, the actor's
queue, the object store round trip (and, on one machine, Ray's own processes competing for
its cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import qualspec

COUNTRIES = [
    "France",
    "Spain",
    "Italy",
    "Germany",
    "Japan",
    "Egypt",
    "Peru",
    "Kenya",
    "Norway",
    "Chile",
    "Canada",
    "Greece",
]


def write_suite(path: Path, name: str, cells: int, max_tokens: int) -> Path:
    """One scenario over ``cells`` rows (a country and a row number: every prompt new)."""
    rows = [
        {"id": f"r{i:04d}", "n": str(i), "country": COUNTRIES[i % len(COUNTRIES)]}
        for i in range(cells)
    ]
    path.write_text(
        f"name: {name}\n"
        "candidates:\n"
        f"  - {{name: smol, model: local/smollm2, params: {{max_tokens: {max_tokens}}}}}\n"
        "scenarios:\n"
        "  - name: capital\n"
        '    prompt: "Row {{ n }}: what is the capital of {{ country }}? A few words."\n'
        f"    inputs: {json.dumps(rows)}\n",
        encoding="utf-8",
    )
    return path


async def timed_run(executor: str, work: Path, suite: Path, warm: Path) -> tuple[float, int]:
    """Seconds for ``suite`` in a session of ``executor`` (after an untimed warm-up run),
    and the answers recorded."""
    options = qualspec.ExecuteOptions(
        judge=False, use_cache=False, max_concurrency=1, executor=executor, ray_num_cpus=1
    )
    db = f"sqlite:///{work / f'{executor}.db'}"
    async with qualspec.Session(db=db, options=options) as session:
        await session.run(warm)  # the model loaded (and the actor started): not timed
        began = time.perf_counter()
        outcome = await session.run(suite)
        took = time.perf_counter() - began
    answered = sum(r.error is None for r in outcome.record.responses)
    return took, answered


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=24, help="answers per run (default 24)")
    parser.add_argument("--max-tokens", type=int, default=16, help="tokens per answer")
    parser.add_argument("--repeats", type=int, default=2, help="alternating pairs measured")
    args = parser.parse_args()
    os.environ.setdefault("QUALSPEC_LOCAL_THREADS", "1")
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    times: dict[str, list[float]] = {"local": [], "ray": []}
    import ray  # one Ray instance for every Ray session of the run (its start is not timed)

    ray.init(include_dashboard=False, log_to_driver=False)
    with tempfile.TemporaryDirectory(prefix="qsbench") as tmp:
        work = Path(tmp)
        warm = write_suite(work / "warm.yaml", "warm-up", 1, args.max_tokens)
        for repeat in range(args.repeats):
            for executor in ("local", "ray"):
                name = f"overhead-{executor}-{repeat}"
                suite = write_suite(work / f"{name}.yaml", name, args.cells, args.max_tokens)
                took, answered = asyncio.run(timed_run(executor, work, suite, warm))
                if answered != args.cells:
                    print(f"{executor}: only {answered} of {args.cells} answered")
                    return 1
                times[executor].append(took / args.cells)
                print(f"  pair {repeat + 1} {executor:5}: {took:7.2f} s, {answered} answers")
    ray.shutdown()
    local, remote = statistics.median(times["local"]), statistics.median(times["ray"])
    print(f"local executor: {local * 1000:8.1f} ms per call (median of {args.repeats})")
    print(f"ray executor:   {remote * 1000:8.1f} ms per call (median of {args.repeats})")
    print(f"overhead per call: {(remote - local) * 1000:+.1f} ms")
    print(f"ratio ray / local: {remote / local:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
