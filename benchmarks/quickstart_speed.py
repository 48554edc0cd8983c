"""The quickstart on the embedded model: `qualspec run` against raw llama-cpp-python.

    python benchmarks/quickstart_speed.py [--suite examples/quickstart.yaml]

In the same run, on the same machine:

  1. qualspec: ``qualspec run SUITE --db sqlite:///<fresh>.db --quiet`` in a child process
     with a fresh QUALSPEC_HOME (empty cache), measured whole (wall, from start to exit:
     imports, model load, answers, judge calls, checks, store, report);
  2. raw: the same prompts through ``llama_cpp.Llama.create_chat_completion`` directly, in
     one process: every candidate call of the run, then every judge call of the run with
     the very messages qualspec sent (read back from the cache the run wrote) and the same
     ``max_tokens`` and response format: the least any client needs to make those calls.

Printed: both walls, the ratio qualspec/raw, the number of calls, the run's own split of
service time and queue wait (from the store), and the target (the quickstart <= 45 s).
Missing the target is a result, not an error.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_calls import qualspec_run_argv  # noqa: E402 - beside this file

TARGET_S = 45.0
ROOT = Path(__file__).resolve().parent.parent


def _run_qualspec(suite: Path, work: Path) -> tuple[float, Path]:
    db = work / "bench.db"
    env = {**os.environ, "QUALSPEC_HOME": str(work / "home")}
    start = time.perf_counter()
    subprocess.run(
        qualspec_run_argv(suite, db, work / "out.json"),
        check=True,
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start, db


def _timings(db: Path) -> dict[str, float]:
    """The run's recorded service time and queue wait, and how many records it made."""
    import sqlite3

    con = sqlite3.connect(db)
    rows = con.execute("SELECT latency_s, queue_s FROM responses").fetchall()
    jrows = con.execute("SELECT latency_s, queue_s FROM judgments").fetchall()
    con.close()
    service = sum(r[0] or 0 for r in rows) + sum(r[0] or 0 for r in jrows)
    queue = sum(r[1] or 0 for r in rows) + sum(r[1] or 0 for r in jrows)
    return {
        "service_s": service,
        "queue_s": queue,
        "answers": len(rows),
        "evaluations": len(jrows),
    }


def _raw(suite: Path, work: Path) -> tuple[float, int]:
    """The same calls, straight to llama-cpp-python: the plan's answers and the judge calls
    the run's judge made (rebuilt with qualspec's own prompt builder)."""
    from llama_cpp import Llama

    from qualspec.engine import expand
    from qualspec.judges import all_criteria_schema, build_all_criteria_messages, candidate_view
    from qualspec.providers import bounded_strings, resolve_model_path
    from qualspec.spec import load_suite

    start = time.perf_counter()
    llama = Llama(
        model_path=str(resolve_model_path("smollm2")),
        n_ctx=2048,
        n_threads=os.cpu_count() or 1,
        verbose=False,
    )
    plan = expand(load_suite(suite))
    calls = 0
    answers = []
    for item in plan.items:
        out = llama.create_chat_completion(
            messages=[{"role": m.role, "content": m.content} for m in item.messages],
            max_tokens=int(item.params.get("max_tokens") or 256),
            temperature=item.temperature,
            seed=item.run_index,
        )
        answers.append((item, out["choices"][0]["message"]["content"] or ""))
        calls += 1
    for item, text in answers:
        if not item.criteria:
            continue
        messages = build_all_criteria_messages(
            criteria=item.criteria, view=candidate_view(item), response=text
        )
        llama.create_chat_completion(
            messages=[{"role": m.role, "content": m.content} for m in messages],
            max_tokens=320,
            temperature=0.0,
            response_format={
                "type": "json_object",
                "schema": bounded_strings(all_criteria_schema(len(item.criteria))),
            },
        )
        calls += 1
    return time.perf_counter() - start, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="examples/quickstart.yaml")
    args = parser.parse_args()
    suite = (ROOT / args.suite).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        wall, db = _run_qualspec(suite, work)
        timings = _timings(db)
        raw_wall, raw_calls = _raw(suite, work)
    print(
        f"qualspec run {args.suite}: {wall:.1f} s (target <= {TARGET_S:.0f} s: "
        f"{'met' if wall <= TARGET_S else 'MISSED'})"
    )
    print(
        f"  {timings['answers']} answers, {timings['evaluations']} evaluation records; "
        f"service time {timings['service_s']:.1f} s, queue wait {timings['queue_s']:.1f} s"
    )
    print(
        f"raw llama-cpp-python, same answers and one all-criteria judge call per answer: "
        f"{raw_wall:.1f} s for {raw_calls} calls"
    )
    print(f"ratio qualspec/raw: {wall / raw_wall:.2f}x")
    print(
        json.dumps(
            {
                "qualspec_s": round(wall, 2),
                "raw_s": round(raw_wall, 2),
                "ratio": round(wall / raw_wall, 3),
                **{k: round(v, 2) for k, v in timings.items()},
            }
        )
    )


if __name__ == "__main__":
    main()
