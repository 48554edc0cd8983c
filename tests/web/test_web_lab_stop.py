"""Stopping the Lab (issue 19, item 4): a client that closes the Lab's stream (the page's
Stop aborts its fetch) or its JSON request stops the Lab on the server: the call in
flight is abandoned, no further model call is made (counted on the fake server after the
held answer is released), and the run is left ``interrupted``. The stream names the run
at once (a ``run`` event), so a stopped Lab still links to its run."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from helpers_web import KEY_ENV, lab_body, providers, uvicorn_server

from qualspec.store import Store
from qualspec.testing import FakeServer, LabScript
from qualspec.web import create_app

pytestmark = pytest.mark.timeout(300)


class Held:
    """The Lab's models on a fake server whose ``hold``-th answer written is held until
    ``release`` (the evaluator's verdicts are scripted: 0.3, then 0.5, ...)."""

    def __init__(self, hold: int) -> None:
        self.script = LabScript(scores=[0.3, 0.5, 0.6])
        self.hold = hold
        self.asked = threading.Event()
        self.release = threading.Event()
        self._written = 0

    def answer(self, body: dict[str, Any]) -> str:
        self._written += 1
        if self._written == self.hold:
            self.asked.set()
            self.release.wait(120)
        return self.script.generate(body)


@contextmanager
def served(db: str, held: Held) -> Iterator[tuple[FakeServer, int]]:
    with FakeServer(answer=held.answer, judge_reply=held.script.evaluate) as lab:
        try:
            app = create_app(db=db, providers=providers(lab))
            with uvicorn_server(app) as base:
                port = urlsplit(base).port
                assert port is not None
                yield lab, port
        finally:
            held.release.set()


def _post(port: int, path: str, body: dict[str, Any]) -> socket.socket:
    raw = json.dumps(body)
    request = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(raw)}\r\n\r\n{raw}"
    )
    client = socket.create_connection(("127.0.0.1", port), timeout=120)
    client.sendall(request.encode())
    return client


def _read_until(client: socket.socket, marker: bytes) -> bytes:
    seen = b""
    while marker not in seen:
        chunk = client.recv(65536)
        assert chunk, f"the stream ended before {marker!r}: {seen!r}"
        seen += chunk
    return seen


def _lab_run_after_it_ends(db: str) -> Any:
    deadline = time.monotonic() + 120  # waits for a state, not a time
    while time.monotonic() < deadline:
        with Store.open(db) as store:
            runs = [r for r in store.list_runs() if r.metadata.get("kind") == "lab"]
        if runs and runs[0].status != "running":
            return runs[0]
        time.sleep(0.05)
    raise AssertionError("the Lab's run never ended")


def test_closing_the_stream_stops_the_lab_with_no_further_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-web")
    db = f"sqlite:///{tmp_path / 'web.db'}"
    held = Held(hold=2)  # the second answer (iteration 2) is held
    with served(db, held) as (lab, port):
        client = _post(port, "/api/generate-answer/stream", lab_body(iter_max=5))
        try:
            seen = _read_until(client, b"event: iteration")
            assert b"event: run" in seen  # the run is named before any iteration
            assert held.asked.wait(120), "iteration 2 never asked for its answer"
        finally:
            client.close()  # Stop: the page aborts its fetch while the model answers
        run = _lab_run_after_it_ends(db)
        assert run.status == "interrupted"
        assert json.dumps(run.id) in seen.decode()
        held.release.set()
        calls = lab.calls
        # the run's page keeps the iteration done before the stop, as the best so far
        page = httpx.get(f"http://127.0.0.1:{port}/runs/{run.id}", timeout=120).text
        assert "This Lab run was stopped before it finished" in page
        assert '<article class="iteration best" data-iteration="1">' in page
        assert "Best answer so far" in page
    # iteration 1 (answer, verdict) and iteration 2's answer: no verdict, no iteration 3
    assert calls == 3
    assert len(held.script.evaluation_prompts) == 1


def test_a_json_lab_request_whose_client_goes_stops_calling_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-web")
    db = f"sqlite:///{tmp_path / 'web.db'}"
    held = Held(hold=1)  # the first answer is held
    with served(db, held) as (lab, port):
        client = _post(port, "/api/generate-answer", lab_body(iter_max=5))
        try:
            assert held.asked.wait(120), "the Lab never called the model"
        finally:
            client.close()
        run = _lab_run_after_it_ends(db)
        assert run.status == "interrupted"
        held.release.set()
        calls = lab.calls
    assert calls == 1  # the held answer only: never evaluated, never asked again
