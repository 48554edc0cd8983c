"""The Lab's requests on the server: one the Lab must refuse (its provider's API key is
not set) is a 400 that leaves no run; and the form posted without script, served by
uvicorn on 127.0.0.1, stops (no further call, the run left ``interrupted``) when the
browser goes away while the model is still answering, instead of calling the model on for
nobody."""

from __future__ import annotations

import html
import socket
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import pytest
from helpers_web import KEY_ENV, lab_body, providers, uvicorn_server

from qualspec.store import Store
from qualspec.testing import FakeServer
from qualspec.web import create_app

pytestmark = pytest.mark.timeout(300)


def _lab_runs(db: str) -> list[Any]:
    with Store.open(db) as store:
        return [r for r in store.list_runs() if r.metadata.get("kind") == "lab"]


def test_the_lab_form_stops_calling_the_model_when_the_browser_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-web")
    db = f"sqlite:///{tmp_path / 'web.db'}"
    asked, release = threading.Event(), threading.Event()

    def answer(body: dict[str, Any]) -> str:  # the first answer is held until released
        asked.set()
        release.wait(120)
        return "Answer"

    with FakeServer(answer=answer) as lab:
        app = create_app(db=db, providers=providers(lab))
        with uvicorn_server(app) as base:
            port = urlsplit(base).port
            assert port is not None
            form = urlencode({k: str(v) for k, v in lab_body(iter_max=3).items()})
            request = (
                f"POST /lab HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Content-Type: application/x-www-form-urlencoded\r\n"
                f"Content-Length: {len(form)}\r\n\r\n{form}"
            )
            browser = socket.create_connection(("127.0.0.1", port))
            try:
                browser.sendall(request.encode())
                assert asked.wait(120), "the Lab never called the model"
            finally:
                browser.close()  # the browser goes away while the model is answering
            # the Lab notices: its run ends, interrupted, while the answer is still held
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                runs = _lab_runs(db)
                if runs and runs[0].status != "running":
                    break
                time.sleep(0.05)
            release.set()
            (run,) = _lab_runs(db)
            assert run.status == "interrupted"
        # nothing was asked after the browser went: no evaluation, no second round
        assert lab.calls == 1


@pytest.mark.asyncio
async def test_a_request_refused_for_a_missing_key_leaves_no_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    db = f"sqlite:///{tmp_path / 'web.db'}"
    said = f"No API key for provider 'fake': set the environment variable {KEY_ENV}"
    with FakeServer() as lab:
        app = create_app(db=db, providers=providers(lab))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            for path in ("/api/generate-answer", "/api/generate-answer/stream"):
                response = await c.post(path, json=lab_body())
                assert response.status_code == 400 and said in response.json()["detail"]
            form = {k: str(v) for k, v in lab_body().items()}
            page = await c.post("/lab", data=form)
            assert page.status_code == 400 and said in html.unescape(page.text)
            assert (await c.get("/api/runs")).json() == []
        await app.fastapi.state.web.aclose()
        assert lab.calls == 0
