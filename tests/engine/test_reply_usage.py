"""The usage a reply carries is the usage its record keeps (issue 18: one usage object,
one ``ResponseRecord.from_reply``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from qualspec import ProviderConfig, Session, Usage
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY = "sk-reply-usage-9e2b"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("FAKE_KEY", KEY)
    with FakeServer(require_key=KEY, latency=0.01) as srv:
        yield srv


@pytest.mark.asyncio
async def test_a_replys_usage_is_what_its_record_keeps(server: FakeServer, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    config = ProviderConfig(type="openai", base_url=server.base_url, api_key_env="FAKE_KEY")
    async with Session(db=db, providers={"fake": config}) as session:
        async with session.recording("usage") as run_id:
            fresh = await session.complete("fake/m", "hi", max_tokens=9)
            server.fail_next(5, status=400)
            failed = await session.complete("fake/m", "other", max_tokens=9)
        async with session.recording("usage, again") as again_id:
            cached = await session.complete("fake/m", "hi", max_tokens=9)
    assert isinstance(fresh.usage, Usage) and fresh.usage.attempts == 1
    assert fresh.usage.input_tokens and fresh.usage.latency_s and not fresh.usage.cached
    assert cached.usage.cached and cached.usage.attempts == 0 and cached.usage.cost_usd == 0.0
    assert failed.usage.error and failed.text is None
    with Store.open(db) as store:
        recorded = {r.text: r.usage for r in store.load_run(run_id).responses}
        again = [r.usage for r in store.load_run(again_id).responses]
    assert recorded == {fresh.text: fresh.usage, None: failed.usage}
    assert again == [cached.usage]
