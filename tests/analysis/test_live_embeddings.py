"""``qualspec run`` with the embeddings extra embeds each answer while the run waits on the
network (the embedding sink), each distinct text once, kept in the store by its SHA-256,
so the analysis at the end and a cached rerun embed nothing; torch is never imported."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import run_cli
from qualspec.analysis import _similarity
from qualspec.analysis._static_embeddings import load_static_embedder
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_LIVE_EMBED_KEY"
RUNS = 3
TEMPERATURES = (0.0, 1.0)
CALLS = RUNS * len(TEMPERATURES)
SUITE = """name: live
candidates: [{{name: alpha, model: fake/model-a}}]
scenarios:
  - {{name: s, prompt: "Tell me about the sea", criteria: ["is an answer"]}}
temperatures: [0.0, 1.0]
runs_per_temperature: {runs}
providers:
  fake: {{type: openai, base_url: "{url}", api_key_env: {key}, max_concurrency: 1}}
"""
WORDS = ["calm", "blue", "deep", "cold", "salty", "wide", "stormy", "quiet"]
WAIT_S = 120.0  # how long the last call waits for an embedding (only a failure waits)


class Events:
    """What happened, in order: the server's answers and the embedder's batches."""

    def __init__(self) -> None:
        self.log: list[tuple[str, int]] = []
        self.lock = threading.Lock()
        self.embedded = threading.Event()
        self.texts: list[str] = []
        self.calls = 0

    def add(self, what: str, n: int) -> None:
        with self.lock:
            self.log.append((what, n))

    def answer(self, body: dict[str, Any]) -> str:
        """A distinct answer per call; the last call is answered only once something was
        embedded (or after WAIT_S, when nothing is embedded during the run)."""
        with self.lock:
            self.calls += 1
            n = self.calls
        if n == CALLS:
            self.embedded.wait(WAIT_S)
        self.add("answered", n)
        return f"The sea is {WORDS[n % len(WORDS)]} and {WORDS[(3 * n) % len(WORDS)]} today {n}."


class CountingEmbedder:
    """The real static embedder, counting what it embeds."""

    def __init__(self, events: Events) -> None:
        self.events = events
        self.real = load_static_embedder()

    def encode(self, texts: list[str], **kw: Any) -> Any:
        self.events.texts += texts
        self.events.add("embedded", len(texts))
        self.events.embedded.set()
        return self.real.encode(texts, **kw)


@pytest.fixture
def events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Events]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(KEY_ENV, "sk-live")
    seen = Events()
    embedder = CountingEmbedder(seen)
    monkeypatch.setattr(_similarity, "_model", lambda: embedder)
    yield seen


def write_suite(tmp_path: Path, url: str) -> Path:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE.format(url=url, key=KEY_ENV, runs=RUNS), encoding="utf-8")
    return suite


def run_suite(capsys: pytest.CaptureFixture[str], suite: Path) -> str:
    """``qualspec run SUITE`` without a judge into the default store (must exit 0): the
    id of the run it recorded."""
    code, out, err = run_cli(
        capsys, "run", str(suite), "--quiet", "--no-calibration", "--no-judge", "-o", "r.json"
    )
    assert code == 0, out + err
    with Store.open() as store:
        return store.list_runs(limit=1)[0].id


def test_answers_are_embedded_while_the_run_waits_on_the_network(
    events: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer(answer=events.answer) as server:
        run_id = run_suite(capsys, write_suite(tmp_path, server.base_url))
    assert server.calls == CALLS
    # the last call was answered after an embedding: it waited for one (one at a time,
    # the answers before it were recorded, and embedded, while it was in flight)
    first_embedding = events.log.index(next(e for e in events.log if e[0] == "embedded"))
    assert first_embedding < events.log.index(("answered", CALLS)), events.log
    with Store.open() as store:
        texts = [r.text for r in store.load_run(run_id).responses if r.text]
    assert sorted(events.texts) == sorted(set(texts))  # each distinct text once
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["analysis"]
    assert written["similarity_method"] == "embeddings"


def test_a_cached_rerun_embeds_nothing_and_vectors_are_kept_by_hash(
    events: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events.embedded.set()  # no call waits here
    with FakeServer(answer=events.answer) as server:
        suite = write_suite(tmp_path, server.base_url)
        first = run_suite(capsys, suite)
        embedded = list(events.texts)
        events.texts.clear()
        second = run_suite(capsys, suite)
    assert server.calls == CALLS  # the rerun's answers came from the cache
    assert first != second
    assert len(embedded) == CALLS and events.texts == []  # the rerun embedded nothing
    first_analysis = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["analysis"]
    assert first_analysis["similarity_method"] == "embeddings"
    with Store.open() as store:
        assert store.cache_stats()["kinds"]["embedding"]["entries"] == CALLS
        keys = [
            f"embedding:{_similarity.EMBEDDING_MODEL}:{hashlib.sha256(t.encode()).hexdigest()}"
            for t in embedded
        ]
        kept = store.cache_get_many(keys)
    assert set(kept) == set(keys)
    assert all(e.kind == "embedding" and e.text for e in kept.values())


NO_TORCH_PROBE = """
import atexit, json, sys
def report():
    names = ("torch", "sentence_transformers", "transformers", "tokenizers")
    with open(sys.argv[1], "w") as out:
        json.dump({name: name in sys.modules for name in names}, out)
atexit.register(report)
from qualspec.cli import main
main(sys.argv[2:])
"""


def test_a_run_with_the_extra_imports_no_torch(tmp_path: Path) -> None:
    events = Events()
    events.embedded.set()
    with FakeServer(answer=events.answer) as server:
        suite = write_suite(tmp_path, server.base_url)
        env = {**os.environ, KEY_ENV: "sk-live", "QUALSPEC_HOME": str(tmp_path / ".qualspec")}
        env.pop("QUALSPEC_DATABASE_URL", None)
        argv = ["run", str(suite), "--quiet", "--no-calibration", "--no-judge", "-o", "r.json"]
        done = subprocess.run(
            [sys.executable, "-c", NO_TORCH_PROBE, str(tmp_path / "modules.json"), *argv],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["analysis"]
    assert written["similarity_method"] == "embeddings"
    modules = json.loads((tmp_path / "modules.json").read_text(encoding="utf-8"))
    assert modules == {
        "torch": False,
        "sentence_transformers": False,
        "transformers": False,
        "tokenizers": True,  # the extra was used, through tokenizers alone
    }


def test_a_model_that_cannot_load_never_stops_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(KEY_ENV, "sk-live")

    def broken() -> Any:
        raise OSError("tokenizer.json: unreadable")

    monkeypatch.setattr(_similarity, "_model", broken)
    events = Events()
    events.embedded.set()
    with FakeServer(answer=events.answer) as server:
        run_id = run_suite(capsys, write_suite(tmp_path, server.base_url))
    assert server.calls == CALLS
    with Store.open() as store:
        assert len(store.load_run(run_id).responses) == CALLS
        assert "embedding" not in store.cache_stats()["kinds"]
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["analysis"]
    assert written["similarity_method"] == "lexical"  # the analysis fell back
