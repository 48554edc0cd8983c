"""Replicas of a real server: three ``python -m llama_cpp.server`` processes serving the
embedded SmolLM2 GGUF as one provider (``base_urls``). One is killed (SIGKILL, by its PID)
once the run has recorded some answers: the run still answers every cell, on the others,
and ``served_by`` names the replicas that served."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.embedded_model

CELLS = 12
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

SUITE = """
name: llama-replicas
providers:
  llama:
    type: openai
    base_urls: %(urls)s
    timeout: 600
    max_concurrency: 1
    replica_cooldown: 600
candidates:
  - {name: smol, model: llama/smollm2, params: {max_tokens: 12}}
scenarios:
  - name: capital
    prompt: "What is the capital of {{ country }}? Answer in a few words."
    inputs: %(inputs)s
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(model: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    with log.open("wb") as out:
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
                "512",
                "--n_threads",
                "1",
                "--n_threads_batch",
                "1",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return proc, f"http://127.0.0.1:{port}/v1"


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + 300
    while True:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5):
                return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[list[tuple[subprocess.Popen[bytes], str]]]:
    from qualspec.providers import resolve_model_path

    model = str(resolve_model_path("smollm2"))
    started: list[tuple[subprocess.Popen[bytes], str]] = []
    try:
        for i in range(3):
            started.append(_start(model, tmp_path / f"server{i}.log"))
        for i, (proc, url) in enumerate(started):
            _wait_ready(proc, url, tmp_path / f"server{i}.log")
        yield started
    finally:
        for proc, _url in started:
            _stop(proc)


def _answered(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            row = conn.execute("SELECT count(*) FROM responses WHERE error IS NULL").fetchone()
    except sqlite3.Error:  # not created yet
        return 0
    return int(row[0])


@pytest.mark.timeout(1800)
def test_a_replica_killed_mid_run_loses_no_cell(
    replicas: list[tuple[subprocess.Popen[bytes], str]], tmp_path: Path
) -> None:
    urls = [url for _proc, url in replicas]
    suite = tmp_path / "suite.yaml"
    inputs = [{"country": c} for c in COUNTRIES[:CELLS]]
    suite.write_text(SUITE % {"urls": json.dumps(urls), "inputs": json.dumps(inputs)})
    out, db = tmp_path / "out.json", tmp_path / "q.db"
    env = dict(os.environ, QUALSPEC_HOME=str(tmp_path / "home"))
    env.pop("QUALSPEC_DATABASE_URL", None)
    args = ["run", str(suite), "--no-judge", "--no-cache", "--quiet", "--output", str(out)]
    code = "from qualspec.cli import main\nmain()\n"
    run = subprocess.Popen(
        [sys.executable, "-c", code, *args, "--db", f"sqlite:///{db}"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    victim, victim_url = replicas[1]
    try:
        deadline = time.monotonic() + 600
        while _answered(db) < 2:  # kill it once the run has recorded some answers
            assert run.poll() is None, run.communicate()[0].decode()[-3000:]
            assert time.monotonic() < deadline, "the run recorded no answers"
            time.sleep(0.05)
        victim.kill()  # SIGKILL, by its PID
        victim.wait(timeout=30)
        at_kill = _answered(db)
        assert at_kill < CELLS  # mid-run: cells were still to answer
        output, _ = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(timeout=30)
    assert run.returncode == 0, output.decode()[-3000:]
    data = json.loads(out.read_text())
    responses = data["responses"]
    assert len(responses) == CELLS
    assert [r["error"] for r in responses] == [None] * CELLS
    assert all(r["text"] for r in responses)
    served = [r["served_by"] for r in responses]
    assert set(served) <= set(urls) and len(set(served)) >= 2
    # the killed replica served only what it answered before the kill (one more may have
    # been on its way to the store)
    assert served.count(victim_url) <= at_kill + 1
