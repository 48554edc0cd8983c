"""A run's page at size: gzip-compressed, a finished run's analysis computed once (kept in
the store, so a new server reads it) and its page rendered once; a run in progress is
never kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from qualspec.analysis import _stored
from qualspec.store import JudgmentRecord, ResponseRecord, Store
from qualspec.web import create_app

pytestmark = pytest.mark.asyncio


def seed_run(db: str, *, finished: bool = True) -> str:
    """A run of 2 temperatures x 3 runs x 2 roles, one criterion and one check each."""
    with Store.open(db) as store:
        meta = {"dimensions": {"candidates": ["gpt"], "roles": ["novice", "expert"]}}
        run_id = store.create_run("size", "h", meta)
        responses: list[ResponseRecord] = []
        judgments: list[JudgmentRecord] = []
        for role in ("novice", "expert"):
            for temp in (0.0, 1.0):
                for run in range(3):
                    key = f"{role}-{temp}-{run}"
                    text = f"Answer {run} at {temp} for the {role}: tides follow the moon."
                    responses.append(
                        ResponseRecord(
                            key=key,
                            candidate="gpt",
                            role=role,
                            scenario="tides",
                            input_id=None,
                            temperature=temp,
                            effective_temperature=temp,
                            run_index=run,
                            provider="fake",
                            model="m",
                            text=text,
                        )
                    )
                    score = 5.0 + run + (2 if role == "expert" else 0)
                    judgments.append(
                        JudgmentRecord(
                            response_key=key,
                            criterion="mentions the moon",
                            judge_key=f"j-{key}",
                            judge_model="judge",
                            threshold=7.0,
                            score=score,
                            passed=score >= 7,
                        )
                    )
        store.record_responses(run_id, responses)
        store.record_judgments(run_id, judgments)
        if finished:
            store.finish_run(run_id, "finished")
    return run_id


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'web.db'}"


@pytest.fixture
def analyses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The ids of the runs the analysis was computed for, in order."""
    calls: list[str] = []
    real = _stored.analyze_run

    def counted(record: Any, **kw: Any) -> Any:
        calls.append(record.summary.id)
        return real(record, **{**kw, "similarity": "lexical"})  # no embedding model to load

    monkeypatch.setattr(_stored, "analyze_run", counted)
    monkeypatch.setattr(_stored, "similarity_method", lambda: "lexical")
    yield calls


async def get(db: str, *paths: str, encoding: str = "gzip") -> list[httpx.Response]:
    """``paths`` fetched in order from one new app on ``db``."""
    app = create_app(db=db)
    transport = httpx.ASGITransport(app=app)
    out: list[httpx.Response] = []
    headers = {"Accept-Encoding": encoding}
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        for path in paths:
            out.append(await client.get(path, headers=headers))
    await app.fastapi.state.web.aclose()
    return out


async def test_a_finished_runs_page_is_gzipped_and_its_analysis_computed_once(
    db: str, analyses: list[str]
) -> None:
    run_id = seed_run(db)
    first, again = await get(db, f"/runs/{run_id}/report", f"/runs/{run_id}/report")
    for response in (first, again):
        assert response.status_code == 200
        assert response.headers["content-encoding"] == "gzip"
        assert "default-src 'none'" in response.headers["content-security-policy"]
        assert "Temperature" in response.text and "expert" in response.text
    assert first.text == again.text
    assert analyses == [run_id]  # the second view rendered nothing
    # a new server (no page kept in memory) reads the analysis the store kept
    (fresh,) = await get(db, f"/runs/{run_id}/report")
    assert fresh.text == first.text
    assert analyses == [run_id]
    (data,) = await get(db, f"/api/runs/{run_id}")
    assert data.headers["content-encoding"] == "gzip"
    assert data.json()["analysis"]["role_gaps"] and analyses == [run_id]
    with Store.open(db) as store:
        assert store.cache_stats()["kinds"]["analysis"]["entries"] == 1


async def test_without_gzip_the_kept_page_is_sent_plain(db: str, analyses: list[str]) -> None:
    run_id = seed_run(db)
    first, again = await get(
        db, f"/runs/{run_id}/report", f"/runs/{run_id}/report", encoding="identity"
    )
    assert "content-encoding" not in again.headers
    assert again.content == first.content and b"</html>" in again.content


async def test_a_run_in_progress_is_never_kept(db: str, analyses: list[str]) -> None:
    run_id = seed_run(db, finished=False)
    first, again = await get(db, f"/runs/{run_id}/report", f"/runs/{run_id}/report")
    assert first.status_code == again.status_code == 200
    assert analyses == [run_id, run_id]
    with Store.open(db) as store:
        assert "analysis" not in store.cache_stats()["kinds"]
        # it finishes: now its analysis is kept, once
        store.finish_run(run_id, "finished")
    await get(db, f"/runs/{run_id}/report", f"/runs/{run_id}/report")
    assert analyses == [run_id, run_id, run_id]


async def test_a_run_resumed_after_its_view_is_analysed_again(db: str, analyses: list[str]) -> None:
    run_id = seed_run(db)
    (before,) = await get(db, f"/runs/{run_id}/report")
    with Store.open(db) as store:  # a resume adds a judgment and finishes it again
        store.record_judgments(
            run_id,
            [
                JudgmentRecord(
                    response_key="novice-0.0-0",
                    criterion="is short",
                    judge_key="j-late",
                    judge_model="judge",
                    threshold=7.0,
                    score=1.0,
                    passed=False,
                )
            ],
        )
        store.finish_run(run_id, "finished")
    (after,) = await get(db, f"/runs/{run_id}/report")
    assert analyses == [run_id, run_id]
    assert "is short" in after.text and "is short" not in before.text
