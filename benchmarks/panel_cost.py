"""What a 3-judge panel costs against a single judge, on the peer workload.

    python benchmarks/panel_cost.py [--inputs 100] [--criteria 1] [--repeats 3] [--latency 0.05]

The workload (that of ``benchmarks/process_workload.py``): one scenario over N input rows,
one candidate, ``--criteria`` criteria, candidate and judges on one OpenAI-compatible
provider (``max_concurrency: 100``) pointed at the fake server in its own process (50 ms a
call). In the same run, alternating, ``--repeats`` times each:

  1. single: ``judge: {model: fake/j1}``;
  2. panel:  ``judge: {panel: [{model: fake/j1}, {model: fake/j2}, {model: fake/j3}]}``.

Each is ``qualspec run SUITE --no-calibration --quiet`` in a child process with a fresh
store and cache (calibration is left out of both: a panel calibrates each judge, so it
would triple as the judging does). Printed: the calls each made (counted by the server),
its judge calls, and the medians (with ranges) of wall seconds, and the ratios panel /
single; then one JSON line. The judges of a panel are asked at once, so the wall grows far
less than the calls: with enough concurrency the panel costs 3x the judge calls and about
the wall of one judging round more per answer than the single judge, not 3x.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_calls import qualspec_run_argv, server_calls, start_server  # noqa: E402 - beside this file

SUITE = """
name: panel_cost
providers:
  fake: {{type: openai, base_url: "{url}", api_key_env: BENCH_KEY, max_concurrency: 100}}
candidates: [{{name: bot, model: fake/m}}]
scenarios:
  - name: rows
    prompt: "Question {{{{ q }}}}"
    criteria: {criteria}
    inputs: {inputs}
judge: {judge}
"""
JUDGES = {
    "single": "{model: fake/j1}",
    "panel": "{panel: [{model: fake/j1}, {model: fake/j2}, {model: fake/j3}]}",
}


def run_once(kind: str, url: str, args: argparse.Namespace, work: Path) -> dict[str, float]:
    """One ``qualspec run`` of the workload with the ``kind`` judge, in a fresh directory."""
    here = Path(tempfile.mkdtemp(dir=work))
    criteria = json.dumps([f"Criterion {i + 1}" for i in range(args.criteria)])
    inputs = json.dumps([{"id": f"r{i}", "q": f"q{i}"} for i in range(args.inputs)])
    suite = here / "suite.yaml"
    suite.write_text(SUITE.format(url=url, criteria=criteria, inputs=inputs, judge=JUDGES[kind]))
    env = {**os.environ, "QUALSPEC_HOME": str(here / "home"), "BENCH_KEY": "sk-bench"}
    before = server_calls(url)
    start = time.perf_counter()
    subprocess.run(
        qualspec_run_argv(suite, here / "bench.db", here / "out.json"),
        check=True,
        env=env,
        cwd=here,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    calls = server_calls(url) - before
    return {"wall": wall, "calls": calls, "judge_calls": calls - args.inputs}


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=100, help="input rows (answers)")
    parser.add_argument("--criteria", type=int, default=1, help="criteria per answer")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.05, help="server seconds per call")
    args = parser.parse_args()
    proc, url = start_server(args.latency)
    results: dict[str, list[dict[str, float]]] = {"single": [], "panel": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for _ in range(args.repeats):
                for kind in ("single", "panel"):  # alternating: load drifts hit both alike
                    results[kind].append(run_once(kind, url, args, work))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(
        f"Workload: {args.inputs} answers x {args.criteria} criteria, fake server "
        f"{args.latency * 1000:.0f} ms a call, {args.repeats} repeats (medians, ranges)"
    )
    summary: dict[str, dict[str, float]] = {}
    for kind, runs in results.items():
        walls = [r["wall"] for r in runs]
        calls = statistics.median(r["calls"] for r in runs)
        judge = statistics.median(r["judge_calls"] for r in runs)
        summary[kind] = {"wall_s": statistics.median(walls), "calls": calls, "judge_calls": judge}
        print(f"  {kind:<7} calls {calls:>6.0f} (judge {judge:>5.0f})   wall {_median(walls)}")
    single, panel = summary["single"], summary["panel"]
    ratios = {
        "judge_calls": panel["judge_calls"] / single["judge_calls"],
        "calls": panel["calls"] / single["calls"],
        "wall": panel["wall_s"] / single["wall_s"],
    }
    print(
        f"Panel / single: judge calls {ratios['judge_calls']:.2f}x, all calls "
        f"{ratios['calls']:.2f}x, wall {ratios['wall']:.2f}x"
    )
    print(json.dumps({"args": vars(args), "summary": summary, "ratios": ratios}))


if __name__ == "__main__":
    main()
