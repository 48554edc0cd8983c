"""``Session.recording``: calls made inside the block go into a run of their own; other
tasks and calls outside it keep going to the session's ad-hoc run; the run's status says
how the block ended."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from qualspec import ProviderConfig, Session
from qualspec.store import Store
from qualspec.testing import FakeServer

pytestmark = pytest.mark.asyncio


async def test_calls_inside_the_block_are_a_run_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_REC_KEY", "sk-rec")
    with FakeServer() as server:
        fake = ProviderConfig(type="openai", base_url=server.base_url, api_key_env="FAKE_REC_KEY")
        async with Session(db=f"sqlite:///{tmp_path / 'r.db'}", providers={"fake": fake}) as s:
            started = asyncio.Event()
            release = asyncio.Event()

            async def outside() -> None:
                await started.wait()
                await s.complete("fake/m", "beside the block", kind="adhoc")
                release.set()

            other = asyncio.create_task(outside())
            async with s.recording("(mine)", {"kind": "mine"}) as run_id:
                started.set()
                await release.wait()  # the other task's call happens while the block is open
                await s.complete("fake/m", "inside the block", kind="mine")
            await other
            await s.complete("fake/m", "after the block", kind="adhoc")
            with pytest.raises(RuntimeError):
                async with s.recording("(broken)") as broken_id:
                    raise RuntimeError("boom")
            mine = s.store.load_run(run_id)
            broken = s.store.get_run(broken_id)
        assert mine.summary.suite_name == "(mine)" and mine.summary.status == "finished"
        assert mine.summary.metadata["kind"] == "mine"
        assert [r.kind for r in mine.responses] == ["mine"]
        assert broken.status == "failed"
    with Store.open(f"sqlite:///{tmp_path / 'r.db'}") as store:  # the ad-hoc run, flushed
        runs = store.list_runs()
    adhoc = [r for r in runs if r.suite_name == "(session)"]
    assert len(adhoc) == 1 and adhoc[0].n_responses == 2
