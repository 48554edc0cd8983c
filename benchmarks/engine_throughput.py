"""Engine overhead vs a bare asyncio+aiohttp client, against the fake server.

    python benchmarks/engine_throughput.py [--calls 5000] [--concurrency 100] [--latency 0.05]
                                           [--repeats 1]

The fake OpenAI-compatible server runs in its own process (so its CPU is not counted).
In one run this measures:
  1. bare:    asyncio + aiohttp, N calls at the given concurrency (the baseline)
  2. engine:  qualspec's engine, the same N calls (no judge), every result recorded in SQLite
  3. cached:  the same suite again: every answer comes from the cache
and prints wall and CPU seconds and the ratios engine/bare. Targets: wall <= 1.3x, CPU <= 2x,
cached rerun < 2 s. With ``--repeats N`` the three are measured N times, alternating, each
engine run on a fresh database, and the medians (with their ranges) are printed: on a
loaded machine one measurement of each is mostly noise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_calls import bare, start_server, stop_server  # noqa: E402 - beside this file


def measure(fn: object) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()  # type: ignore[operator]
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=1, help="alternating measurements")
    args = parser.parse_args()

    from qualspec import Candidate, Evaluation, ExecuteOptions, Scenario
    from qualspec.engine import execute_plan, expand
    from qualspec.spec import ProviderConfig, load_evaluation
    from qualspec.store import Store

    proc, base_url = start_server(args.latency)
    tmp = Path(tempfile.mkdtemp(prefix="qualspec-bench-"))
    os.environ["BENCH_KEY"] = "bench"
    samples: dict[str, list[tuple[float, float]]] = {"bare": [], "engine": [], "cached": []}
    try:
        evaluation = Evaluation(
            name="bench",
            candidates=[Candidate(name="fake", model="bench/fake")],
            scenarios=[
                Scenario(
                    name="q",
                    prompt="question {{ i }}",
                    criteria=["any"],
                    inputs=[{"i": i} for i in range(args.calls)],
                )
            ],
            providers={
                "bench": ProviderConfig(type="openai", base_url=base_url, api_key_env="BENCH_KEY")
            },
        )
        suite = load_evaluation(evaluation, tmp)
        plan = expand(suite)
        options = ExecuteOptions(max_concurrency=args.concurrency, judge=False)

        asyncio.run(bare(base_url, 200, args.concurrency))  # warm up both sides
        for n in range(max(1, args.repeats)):
            store = Store.open(f"sqlite:///{tmp / f'bench-{n}.db'}")  # a fresh store each time

            def engine(store: Store = store) -> None:
                out = execute_plan(suite, plan, store=store, options=options, argv=[])
                assert out.stats.candidate_calls + out.stats.cached_candidate == args.calls, (
                    out.stats
                )

            samples["bare"].append(
                measure(lambda: asyncio.run(bare(base_url, args.calls, args.concurrency)))
            )
            samples["engine"].append(measure(engine))
            samples["cached"].append(measure(engine))
            store.close()
    finally:
        stop_server(proc)

    def median(name: str, i: int) -> float:
        return statistics.median(s[i] for s in samples[name])

    b_wall, b_cpu = median("bare", 0), median("bare", 1)
    e_wall, e_cpu = median("engine", 0), median("engine", 1)
    c_wall, c_cpu = median("cached", 0), median("cached", 1)
    pairs = list(zip(samples["bare"], samples["engine"], strict=True))
    wall_ratios = [e[0] / b[0] for b, e in pairs]
    cpu_ratios = [e[1] / b[1] for b, e in pairs]
    result = {
        "calls": args.calls,
        "concurrency": args.concurrency,
        "latency_s": args.latency,
        "repeats": len(pairs),
        "bare": {"wall_s": round(b_wall, 3), "cpu_s": round(b_cpu, 3)},
        "engine_sqlite": {"wall_s": round(e_wall, 3), "cpu_s": round(e_cpu, 3)},
        "cached_rerun": {"wall_s": round(c_wall, 3), "cpu_s": round(c_cpu, 3)},
        "wall_ratio": round(statistics.median(wall_ratios), 2),
        "cpu_ratio": round(statistics.median(cpu_ratios), 2),
    }
    what = "medians of " + str(len(pairs)) if len(pairs) > 1 else "one measurement"
    print(f"({what})")
    print(f"bare aiohttp      wall {b_wall:6.2f} s   cpu {b_cpu:6.2f} s")
    print(f"qualspec+sqlite   wall {e_wall:6.2f} s   cpu {e_cpu:6.2f} s")
    print(f"cached rerun      wall {c_wall:6.2f} s   cpu {c_cpu:6.2f} s")
    spread = ""
    if len(pairs) > 1:
        spread = (
            f"   (ranges: wall {min(wall_ratios):.2f}-{max(wall_ratios):.2f}, "
            f"cpu {min(cpu_ratios):.2f}-{max(cpu_ratios):.2f})"
        )
    print(
        f"ratios: wall {result['wall_ratio']}x (target <= 1.3)   "
        f"cpu {result['cpu_ratio']}x (target <= 2)   cached rerun {c_wall:.2f} s (target < 2)"
        + spread
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
