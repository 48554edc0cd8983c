"""The CPU a call costs the client: qualspec's OpenAI-compatible provider through its lean
HTTP/1.1 client (``qualspec.providers._wire``) and through aiohttp
(``QUALSPEC_HTTP_CLIENT=aiohttp``), and a bare aiohttp client: the same calls to the same
fake server, in the same run.

    python benchmarks/http_client.py [--calls 50000] [--concurrency 64] [--repeats 3]

Each client makes ``--calls`` chat completions at most ``--concurrency`` at once (the
loop of ``fake_calls.bare``, the same bodies), in turn, ``--repeats`` times each; the fake
server (``qualspec.testing.fakeserver``, 0 ms) runs in its own process, so its CPU is not
counted. Printed per client: calls/s and this process's CPU (user + sys) a call, each
run's and the median.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_calls import bare, bounded, start_server, stop_server  # noqa: E402


async def through_provider(base_url: str, calls: int, concurrency: int) -> None:
    """``bare``'s calls made by qualspec's provider (``provider.complete``)."""
    from qualspec.providers import ChatRequest, Message, ProviderPool
    from qualspec.spec import ProviderConfig

    pool = ProviderPool({"bench": ProviderConfig(type="openai", base_url=base_url)})
    provider = pool.get("bench")
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        message = Message("user", f"Answer: question {i}")
        async with sem:
            answer = await provider.complete(
                ChatRequest(model="fake", messages=(message,), temperature=0.0)
            )
            assert answer.text

    await bounded(calls, concurrency, one)
    await pool.aclose()


def measure(client: str, base_url: str, calls: int, concurrency: int) -> tuple[float, float]:
    """One run of ``client``: calls/s and CPU microseconds a call."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    os.environ["QUALSPEC_HTTP_CLIENT"] = "aiohttp" if client == "provider, aiohttp" else ""
    if client == "bare aiohttp":
        asyncio.run(bare(base_url, calls, concurrency, "Answer: question {}"))
    else:
        asyncio.run(through_provider(base_url, calls, concurrency))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return calls / wall, 1e6 * cpu / calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=50_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    proc, base_url = start_server(0.0, log=False)
    clients = ("provider, lean", "provider, aiohttp", "bare aiohttp")
    results: dict[str, list[tuple[float, float]]] = {client: [] for client in clients}
    try:
        for client in results:  # warm up both
            measure(client, base_url, 1_000, args.concurrency)
        for _ in range(args.repeats):
            for client, runs in results.items():
                rate, cpu = measure(client, base_url, args.calls, args.concurrency)
                runs.append((rate, cpu))
                print(f"{client:>17}: {rate:7.0f} calls/s  {cpu:6.1f} us CPU a call", flush=True)
    finally:
        stop_server(proc)
    medians = {c: statistics.median(cpu for _, cpu in runs) for c, runs in results.items()}
    for client, runs in results.items():
        rate = statistics.median(r for r, _ in runs)
        cpu = medians[client]
        print(f"median {client:>17}: {rate:7.0f} calls/s  {cpu:6.1f} us CPU a call")
    lean, through_aiohttp = medians["provider, lean"], medians["provider, aiohttp"]
    print(f"the provider's CPU a call, lean / aiohttp: {lean / through_aiohttp:.2f}")


if __name__ == "__main__":
    main()
