"""The run page shows people's labels beside the judge's score of each criterion."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from qualspec.store import JudgmentRecord, LabelRecord, ResponseRecord, Store
from qualspec.web import create_app

pytestmark = pytest.mark.asyncio
T0 = datetime(2026, 1, 2, tzinfo=UTC)


def _seed(db: str) -> str:
    with Store.open(db) as store:
        run_id = store.create_run("labelled", "h", {"judge": {"threshold": 7}})
        store.record_responses(
            run_id,
            [
                ResponseRecord(
                    key, "small", None, "greeting", None, 0.0, 0.0, i, "openai", "m",
                    text=f"answer {i}", created_at=T0,
                )
                for i, key in enumerate(("k1", "k2"))
            ],
        )  # fmt: skip
        store.record_judgments(
            run_id,
            [
                JudgmentRecord("k1", "polite", "j1", "openai/judge", 7.0, 8.0, True, created_at=T0),
                JudgmentRecord("k2", "polite", "j2", "openai/judge", 7.0, 9.0, True, created_at=T0),
            ],
        )
        store.record_labels(
            run_id,
            [
                LabelRecord("k1", "polite", score=6.0, passed=False, labeller="ann"),
                LabelRecord("k1", "polite", score=9.0, labeller="bob"),
            ],
            source_name="human.csv",
            source_sha256="a" * 64,
            who="carol",
        )
        store.finish_run(run_id, "finished")
    return run_id


async def test_a_label_is_shown_beside_the_judges_score(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'web.db'}"
    run_id = _seed(db)
    app = create_app(db=db)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        page = await client.get(f"/runs/{run_id}", headers={"accept": "text/html"})
    await app.fastapi.state.web.aclose()
    assert page.status_code == 200
    html = page.text
    assert html.count('class="note human"') == 2  # k1's two labels; k2 has none
    assert "person ann: 6 FAIL</span>" in html
    assert "person bob: 9</span>" in html
    assert 'title="imported by carol from human.csv"' in html
