"""The whole `qualspec run` process vs a bare asyncio+aiohttp script, against the fake server.

    python benchmarks/process_workload.py [--inputs 200] [--repeats 3] [--latency 0.05]
    python benchmarks/process_workload.py --quick       # smoke: 20 inputs, 1 repeat

The workload: one scenario over N input rows (inline ``inputs:``), one candidate, one
criterion, so N answers plus N judge calls, with candidate and judge on one
OpenAI-compatible provider pointed at the fake server (its own process, latency 50 ms).
In the same run, repeated R times (after one unmeasured warm-up of each):

  1. bare:     ``python -c <script>``: asyncio + aiohttp making the same 2N POSTs at the
               same concurrency (each judge call after its answer): the baseline;
  2. qualspec: ``qualspec run SUITE --db sqlite:///<fresh>.db --max-concurrency C --quiet``
               with a fresh database (so an empty cache) and a fresh QUALSPEC_HOME.

Each is a child process, measured whole: wall (start to exit), CPU (user + sys, from
``os.wait4``) and peak RSS (``ru_maxrss``), with bytecode caching on as after an install
(``.pyc`` files go to a folder in the work directory, written by the warm-up). Printed, as
medians over the repeats with their ranges: the wall ratio qualspec/bare, the client CPU
seconds and the peak RSS MB of the qualspec process, against the targets (wall <= 2.3x,
CPU <= 1.0 s, RSS <= 120 MB), then one JSON line. Missing a target is a result, not an
error: the exit code is 0 unless a child process failed (or made the wrong calls).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_WALL_RATIO = 2.3
TARGET_CPU_S = 1.0
TARGET_RSS_MB = 120.0

# The baseline: what any client needs to make the same calls (interpreter start, aiohttp,
# one session, JSON in and out), and nothing else. argv: base_url inputs concurrency.
BARE_CLIENT = r"""
import asyncio, json, sys
import aiohttp

SYSTEM = ("You are a strict, fair judge. You grade one answer on ONE criterion only. "
          "Reply with only a JSON object: {\"score\": <integer 0-10>, \"reasoning\": \"...\"}")
SCHEMA = {"type": "object", "properties": {"score": {"type": "integer"},
          "reasoning": {"type": "string"}}, "required": ["score", "reasoning"]}

async def main(base_url, n, concurrency):
    url = base_url + "/chat/completions"
    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0),
        headers={"Authorization": "Bearer bench", "Content-Type": "application/json"},
    ) as session:
        async def post(body):
            async with sem:
                async with session.post(url, data=json.dumps(body).encode()) as resp:
                    resp.raise_for_status()
                    return json.loads(await resp.read())

        async def row(i):
            prompt = f"question {i}"
            answer = await post({"model": "fake", "temperature": 0.0, "seed": 0,
                                 "messages": [{"role": "user", "content": prompt}]})
            text = answer["choices"][0]["message"]["content"]
            user = (f"Criterion: answers the question\nPrompt given to the model:\n<<<\n"
                    f"{prompt}\n>>>\n\nAnswer to grade:\n<<<\n{text}\n>>>\n")
            verdict = await post({
                "model": "judge", "temperature": 0.0, "max_tokens": 256, "seed": 0,
                "messages": [{"role": "system", "content": SYSTEM},
                             {"role": "user", "content": user}],
                "response_format": {"type": "json_schema", "json_schema": {
                    "name": "response", "schema": SCHEMA, "strict": True}},
            })
            score = json.loads(verdict["choices"][0]["message"]["content"])["score"]
            assert 0 <= score <= 10

        await asyncio.gather(*(row(i) for i in range(n)))

asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
print("bare: done")
"""


@dataclasses.dataclass(frozen=True)
class Sample:
    wall_s: float
    cpu_s: float
    rss_mb: float


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "qualspec.testing.fakeserver",
            "--port",
            "0",
            "--latency",
            str(latency),
            "--no-log",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    base_url = proc.stdout.readline().strip()
    if not base_url.startswith("http"):
        proc.kill()
        raise SystemExit(f"fake server did not start: {base_url!r}")
    return proc, base_url


def write_suite(path: Path, base_url: str, inputs: int) -> None:
    rows = "\n".join(f"      - {{i: {i}}}" for i in range(inputs))
    path.write_text(
        f"""name: process-workload
providers:
  bench: {{type: openai, base_url: "{base_url}", api_key_env: BENCH_KEY}}
candidates:
  - {{name: fake, model: bench/fake}}
judge: {{model: bench/judge, threshold: 7}}
scenarios:
  - name: q
    prompt: "question {{{{ i }}}}"
    criteria: ["answers the question"]
    inputs:
{rows}
""",
        encoding="utf-8",
    )


def measure(argv: list[str], *, cwd: Path, env: dict[str, str], log: Path) -> Sample:
    """Run ``argv`` to completion; its wall, CPU (user+sys) and peak RSS, from wait4."""
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"{argv[:3]} exited {proc.returncode}:\n{tail}")
    rss_mb = usage.ru_maxrss / 1024 if sys.platform != "darwin" else usage.ru_maxrss / 2**20
    return Sample(wall, usage.ru_utime + usage.ru_stime, rss_mb)


def qualspec_argv(suite: Path, db: Path, work: Path, concurrency: int) -> list[str]:
    exe = shutil.which("qualspec", path=str(Path(sys.executable).parent))
    head = [exe] if exe else [sys.executable, "-c", "from qualspec.cli import main; main()"]
    return [
        *head,
        "run",
        str(suite),
        "--db",
        f"sqlite:///{db}",
        "--max-concurrency",
        str(concurrency),
        "--quiet",
        "--no-calibration",  # the same 2N calls as the baseline: no judge calibration
        "--output",
        str(work / "results.json"),
    ]


def check_calls(log: Path, inputs: int) -> None:
    text = log.read_text(errors="replace")
    expected = f"Calls: {inputs} candidate, {inputs} judge"
    if expected not in text:
        raise RuntimeError(f"qualspec run did not make {expected!r}; its output:\n{text[-2000:]}")


def span(values: list[float], fmt: str) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:{fmt}}" if len(values) == 1 else f"{lo:{fmt}}-{hi:{fmt}}"


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--inputs", type=int, default=200, help="input rows (default 200)")
    parser.add_argument("--repeats", type=int, default=3, help="measured repeats (default 3)")
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.05, help="server seconds per call")
    parser.add_argument("--quick", action="store_true", help="smoke: 20 inputs, 1 repeat")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    if args.quick:
        args.inputs, args.repeats = 20, 1

    work = Path(tempfile.mkdtemp(prefix="qualspec-process-"))
    env = {**os.environ, "BENCH_KEY": "bench", "QUALSPEC_HOME": str(work / "home")}
    env.pop("QUALSPEC_DATABASE_URL", None)
    # As on a user's machine, modules are compiled once, not on every start (the warm-up
    # writes the bytecode, under the work directory so the source tree stays clean).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    suite = work / "suite.yaml"
    server, base_url = start_server(args.latency)
    bare: list[Sample] = []
    qs: list[Sample] = []
    try:
        write_suite(suite, base_url, args.inputs)
        bare_argv = [
            sys.executable,
            "-c",
            BARE_CLIENT,
            base_url,
            str(args.inputs),
            str(args.concurrency),
        ]

        def run_bare() -> Sample:
            return measure(bare_argv, cwd=work, env=env, log=work / "bare.log")

        def run_qualspec(n: int) -> Sample:
            db = work / f"fresh-{n}.db"
            shutil.rmtree(work / "home", ignore_errors=True)
            log = work / "qualspec.log"
            argv = qualspec_argv(suite, db, work, args.concurrency)
            sample = measure(argv, cwd=work, env=env, log=log)
            check_calls(log, args.inputs)
            db.unlink(missing_ok=True)
            return sample

        run_bare()  # warm-up: page cache, .pyc files, the server's first connections
        run_qualspec(0)
        for n in range(1, args.repeats + 1):
            bare.append(run_bare())
            qs.append(run_qualspec(n))
    except RuntimeError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 1
    finally:
        server.kill()
        server.wait()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    ratios = [q.wall_s / b.wall_s for b, q in zip(bare, qs, strict=True)]
    ratio = statistics.median(ratios)
    cpu = statistics.median(q.cpu_s for q in qs)
    rss = statistics.median(q.rss_mb for q in qs)
    calls = 2 * args.inputs
    print(
        f"process workload: {args.inputs} inputs x (1 answer + 1 judge) = {calls} calls, "
        f"latency {args.latency * 1000:g} ms, concurrency {args.concurrency}, "
        f"{args.repeats} repeat(s)"
    )
    for name, samples in (("bare asyncio+aiohttp", bare), ("qualspec run", qs)):
        print(
            f"{name:<21} wall {span([s.wall_s for s in samples], '.2f')} s   "
            f"cpu {span([s.cpu_s for s in samples], '.2f')} s   "
            f"peak rss {span([s.rss_mb for s in samples], '.0f')} MB"
        )
    print(
        f"wall ratio: {ratio:.2f}x (range {span(ratios, '.2f')}; "
        f"target <= {TARGET_WALL_RATIO}: {verdict(ratio <= TARGET_WALL_RATIO)})"
    )
    print(
        f"client cpu: {cpu:.2f} s (range {span([q.cpu_s for q in qs], '.2f')}; "
        f"target <= {TARGET_CPU_S}: {verdict(cpu <= TARGET_CPU_S)})"
    )
    print(
        f"peak rss: {rss:.0f} MB (range {span([q.rss_mb for q in qs], '.0f')}; "
        f"target <= {TARGET_RSS_MB:g}: {verdict(rss <= TARGET_RSS_MB)})"
    )
    result = {
        "inputs": args.inputs,
        "calls": calls,
        "concurrency": args.concurrency,
        "latency_s": args.latency,
        "repeats": args.repeats,
        "bare": [dataclasses.asdict(s) for s in bare],
        "qualspec": [dataclasses.asdict(s) for s in qs],
        "wall_ratio": round(ratio, 3),
        "cpu_s": round(cpu, 3),
        "rss_mb": round(rss, 1),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
