"""The web app's test fixtures: the app on a fresh SQLite store with the Lab's models on
the fake server, an httpx client driving it in-process, and uvicorn in a thread."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from qualspec import ProviderConfig
from qualspec.testing import FakeServer, LabScript

KEY_ENV = "FAKE_WEB_KEY"


def providers(server: FakeServer) -> dict[str, ProviderConfig]:
    return {"fake": ProviderConfig(type="openai", base_url=server.base_url, api_key_env=KEY_ENV)}


def lab_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "instruct": "Explain tides",
        "resp_format": "Two sentences",
        "eval_crit": "Mentions the moon",
        "iter_max": 3,
        "score_threshold": 0.8,
        "model": "fake/gen",
        "judge_model": "fake/eval",
    }
    body.update(overrides)
    return body


@contextmanager
def uvicorn_server(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on 127.0.0.1, port 0, in a thread; yields its base URL."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=120)


def seed_reference(
    db: str, call_key: str = "ck-acme-0123456789", text: str = '{"name": "Acme"}'
) -> str:
    """A run that recorded one reference answer (scenario ``profile``, output_schema: the
    fields ``name`` and ``industry``); returns the run's id."""
    from datetime import UTC, datetime

    from qualspec.store import ResponseRecord, Store

    schema = {"fields": [{"name": "name", "critical": True}, {"name": "industry"}]}
    with Store.open(db) as store:
        run_id = store.create_run("profiles", "h", {"output_schemas": {"profile": schema}})
        record = ResponseRecord(
            key=f"ref-{call_key}",
            kind="reference",
            candidate="reference",
            role="",
            scenario="profile",
            input_id="acme",
            temperature=0.0,
            effective_temperature=0.0,
            run_index=0,
            provider="ref",
            model="big",
            text=text,
            finish_reason="stop",
            call_key=call_key,
            created_at=datetime(2026, 3, 1, 9, 0, tzinfo=UTC),
        )
        store.record_responses(run_id, [record])
        store.finish_run(run_id, "finished")
    return run_id


def close_app(app: Any) -> None:
    """Close the session an app opened in-process (httpx runs no lifespan)."""
    asyncio.run(app.fastapi.state.web.aclose())


__all__ = [
    "KEY_ENV",
    "LabScript",
    "Path",
    "close_app",
    "lab_body",
    "providers",
    "seed_reference",
    "uvicorn_server",
]
