"""A run stores each input row once, with the answers asked with it (issue 19, "what was
sent"): the recorder writes the rows in the transaction of their responses, every
response (candidates, temperatures, runs, the reference) names its row, and a cached
rerun names the same rows without storing them again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

import qualspec
from qualspec import Candidate, Evaluation, ProviderConfig, Scenario
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY = "sk-rows-test-7d1e"
ROWS = [
    {"id": "fr", "country": "France", "hint": "wine"},
    {"id": "jp", "country": "Japan", "hint": "<script>alert(1)</script>"},
]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("FAKE_KEY", KEY)
    with FakeServer(latency=0.0, require_key=KEY) as srv:
        yield srv


def _evaluation(base_url: str) -> Evaluation:
    return Evaluation(
        name="capitals",
        candidates=[
            Candidate(name="a", model="fake/model-a"),
            Candidate(name="b", model="fake/model-b"),
        ],
        scenarios=[
            Scenario(
                name="capital",
                prompt="What is the capital of {{ country }}? ({{ hint }})",
                inputs=[dict(r) for r in ROWS],
                criteria=["names the capital"],
            )
        ],
        temperatures=[0.0, 1.0],
        runs_per_temperature=2,
        judge="fake/judge",
        providers={
            "fake": ProviderConfig(type="openai", base_url=base_url, api_key_env="FAKE_KEY")
        },
    )


def _stored_rows(db: str) -> int:
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM input_rows")).scalar_one())
    finally:
        engine.dispose()


def test_a_run_stores_each_row_once_and_every_answer_names_it(
    server: FakeServer, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    options = qualspec.ExecuteOptions(judge=False, calibrate=False)
    outcome = qualspec.run(_evaluation(server.base_url), db=db, options=options)
    assert outcome.status == "finished"
    assert _stored_rows(db) == 2
    with Store.open(db) as store:
        record = store.load_run(outcome.run_id)
    assert len(record.responses) == 16  # 2 rows x 2 candidates x 2 temperatures x 2 runs
    by_id = {r["id"]: r for r in ROWS}
    for r in record.responses:
        assert r.input_values == by_id[str(r.input_id)], r.key
    # what was sent is the template rendered with the stored row
    sent = {body["messages"][-1]["content"] for _t, _h, body in server.request_log}
    assert "What is the capital of Japan? (<script>alert(1)</script>)" in sent
    # a rerun answered from the cache names the same rows, stored once still
    again = qualspec.run(_evaluation(server.base_url), db=db, options=options)
    with Store.open(db) as store:
        cached = store.load_run(again.run_id).responses
    assert all(r.cached for r in cached) and len(cached) == 16
    assert {r.input_hash for r in cached} == {r.input_hash for r in record.responses}
    assert all(r.input_values == by_id[str(r.input_id)] for r in cached)
    assert _stored_rows(db) == 2
