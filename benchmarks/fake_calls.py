"""What the throughput benchmarks share: the fake OpenAI-compatible server
(``qualspec.testing.fakeserver``) in its own process, and the bare asyncio + aiohttp client
that makes the same calls as a run (the baseline a run's calls/s is measured against).

Used by ``scale.py``, ``engine_throughput.py``, ``panel_cost.py``, ``process_workload.py``
and ``bench_runs.py`` (each of which may start a server of its own with :func:`spawn`).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any


def spawn(argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Start a server process that prints its base URL as its first line: the process and
    that URL (the process is killed, and the benchmark stops, when the line is not one)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    base_url = proc.stdout.readline().strip()
    if not base_url.startswith("http"):
        proc.kill()
        raise SystemExit(f"fake server did not start: {base_url!r}")
    return proc, base_url


def start_server(
    latency: float, *, log: bool = True, port: int = 0
) -> tuple[subprocess.Popen[str], str]:
    """The fake server on ``port`` (0: a free one), in its own process (so its CPU is not
    counted): the process and its base URL. ``log``: False passes ``--no-log``."""
    argv = [sys.executable, "-m", "qualspec.testing.fakeserver", "--port", str(port)]
    return spawn(argv + ["--latency", str(latency)] + ([] if log else ["--no-log"]))


def qualspec_run_argv(suite: Path, db: Path, out: Path, *flags: str) -> list[str]:
    """The ``qualspec run`` a benchmark measures, as a child process: ``suite`` on a SQLite
    store at ``db``, its results file at ``out``, no report printed (``--quiet``) and no judge
    calibration (the same calls as a bare baseline), then ``flags``."""
    head = [sys.executable, "-c", "from qualspec.cli import main; main()", "run", str(suite)]
    return [
        *head,
        "--db",
        f"sqlite:///{db}",
        "--output",
        str(out),
        "--quiet",
        "--no-calibration",
        *flags,
    ]


def server_calls(base_url: str) -> int:
    """How many calls the fake server at ``base_url`` has answered (its ``/_stats``)."""
    root = base_url.rsplit("/v1", 1)[0]
    with urllib.request.urlopen(f"{root}/_stats", timeout=10) as resp:  # noqa: S310 (local)
        return int(json.loads(resp.read())["calls"])


def stop_server(proc: subprocess.Popen[str]) -> None:
    """Stop the server started by :func:`start_server` (its own process, by its handle)."""
    proc.kill()
    proc.wait()


async def bare(base_url: str, calls: int, concurrency: int, prompt: str = "question {}") -> None:
    """``calls`` chat completions from asyncio + aiohttp with nothing else, at most
    ``concurrency`` at once and at most 4 x ``concurrency`` tasks pending (bounded, as the
    engine is); ``prompt`` with the call's number in place of ``{}``."""
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one(i: int) -> None:
            body = {
                "model": "fake",
                "messages": [{"role": "user", "content": prompt.format(i)}],
                "temperature": 0.0,
            }
            async with sem:
                async with session.post(
                    f"{base_url}/chat/completions",
                    json=body,
                    headers={"Authorization": "Bearer bench"},
                ) as resp:
                    data = await resp.json()
                    assert data["choices"][0]["message"]["content"]

        await bounded(calls, concurrency, one)


async def bounded(
    calls: int, concurrency: int, one: Callable[[int], Coroutine[Any, Any, None]]
) -> None:
    """``one(0)`` to ``one(calls - 1)`` as tasks, at most 4 x ``concurrency`` pending."""
    pending: set[asyncio.Task[None]] = set()
    for i in range(calls):
        if len(pending) >= 4 * concurrency:
            _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        pending.add(asyncio.create_task(one(i)))
    await asyncio.gather(*pending)
