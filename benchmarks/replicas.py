"""Embedded-model throughput with replicas: 3 ``llama_cpp.server`` replicas against 1.

    python benchmarks/replicas.py [--cells 24] [--max-tokens 32] [--threads 1] [--repeats 1]
                                  [--quick]

Starts three ``python -m llama_cpp.server`` processes serving the embedded SmolLM2 GGUF
(each with ``--threads`` llama.cpp threads) and runs the same suite (``--cells`` answers,
no judge, no cache, every answer recorded in SQLite) twice in one process, alternating:

  1. one replica:    ``base_url`` = the first server
  2. three replicas: ``base_urls`` = the three servers (least in flight first)

and prints the answers per second of each and their ratio (three / one). Each server answers
one call at a time (``max_concurrency: 1`` per replica), so one replica is the throughput of
one server and three replicas can at best triple it, when the machine has the cores for
three servers: on a 2-core machine expect little gain. With ``--repeats N`` the pair is
measured N times and the medians (with their ranges) are printed.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_servers(n: int, threads: int, logs: Path) -> list[tuple[subprocess.Popen[bytes], str]]:
    from qualspec.providers import resolve_model_path

    model = str(resolve_model_path("smollm2"))
    started = []
    for i in range(n):
        port = _free_port()
        with (logs / f"server{i}.log").open("wb") as out:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "llama_cpp.server",
                    "--model",
                    model,
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--n_ctx",
                    "1024",
                    "--n_threads",
                    str(threads),
                    "--n_threads_batch",
                    str(threads),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        started.append((proc, f"http://127.0.0.1:{port}/v1"))
    deadline = time.monotonic() + 300
    for i, (proc, url) in enumerate(started):
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    stop_servers(started)
                    log = (logs / f"server{i}.log").read_text()[-2000:]
                    raise SystemExit(f"llama_cpp.server did not start: {log}") from None
                time.sleep(0.5)
    return started


def stop_servers(started: list[tuple[subprocess.Popen[bytes], str]]) -> None:
    for proc, _url in started:  # each by its own PID
        if proc.poll() is None:
            proc.terminate()
    for proc, _url in started:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def run_suite(urls: list[str], cells: int, max_tokens: int, workdir: Path, tag: str) -> float:
    """Answer ``cells`` questions through ``urls`` (one: base_url); return the wall seconds."""
    from qualspec import Candidate, Evaluation, ExecuteOptions, Scenario
    from qualspec.engine import execute_plan, expand
    from qualspec.spec import ProviderConfig, load_evaluation
    from qualspec.store import Store

    where: dict[str, Any] = {"base_url": urls[0]} if len(urls) == 1 else {"base_urls": urls}
    evaluation = Evaluation(
        name=f"replicas-{tag}",
        candidates=[
            Candidate(name="smol", model="llama/smollm2", params={"max_tokens": max_tokens})
        ],
        scenarios=[
            Scenario(
                name="explain",
                prompt="Explain in two sentences why topic number {{ i }} matters.",
                criteria=["explains why the topic matters"],
                inputs=[{"i": i} for i in range(cells)],
            )
        ],
        temperatures=[0.0],
        providers={"llama": ProviderConfig(type="openai", timeout=600, max_concurrency=1, **where)},
    )
    suite = load_evaluation(evaluation, workdir)
    options = ExecuteOptions(use_cache=False, judge=False, calibrate=False)
    store = Store.open(f"sqlite:///{workdir / (tag + '.db')}")
    try:
        began = time.perf_counter()
        out = execute_plan(suite, expand(suite), store=store, options=options, argv=[])
        wall = time.perf_counter() - began
    finally:
        store.close()
    errors = [r.error for r in out.record.responses if r.error is not None]
    if len(out.record.responses) != cells or errors:
        raise SystemExit(f"{tag}: {len(errors)} errors, first: {errors[:1]}")
    return wall


def _summary(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", type=int, default=24)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads per server")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="6 cells, 8 tokens (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.cells, args.max_tokens = 6, 8
    with tempfile.TemporaryDirectory(prefix="qualspec-replicas-") as tmp:
        workdir = Path(tmp)
        servers = start_servers(3, args.threads, workdir)
        urls = [url for _proc, url in servers]
        one: list[float] = []
        three: list[float] = []
        try:
            run_suite(urls[:1], 2, args.max_tokens, workdir, "warmup")
            for repeat in range(args.repeats):
                one.append(
                    args.cells
                    / run_suite(urls[:1], args.cells, args.max_tokens, workdir, f"one{repeat}")
                )
                three.append(
                    args.cells
                    / run_suite(urls, args.cells, args.max_tokens, workdir, f"three{repeat}")
                )
        finally:
            stop_servers(servers)
    ratios = [t / o for o, t in zip(one, three, strict=True)]
    print(f"cells: {args.cells} answers of up to {args.max_tokens} tokens, no judge, no cache")
    print(f"one replica:    {_summary(one)} answers/s")
    print(f"three replicas: {_summary(three)} answers/s")
    print(f"ratio three/one: {_summary(ratios)}x")
    print(json.dumps({"one_answers_per_s": one, "three_answers_per_s": three, "ratio": ratios}))


if __name__ == "__main__":
    main()
