"""`qualspec rubrics judge` stores its scores in its run; the web app lists them (per-rubric
scores and the weighted score, escaped, under the CSP) and serves the run as the same page
`--html` writes."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers_sessions import ALPHA_ID, write_sessions

from qualspec.cli import main
from qualspec.rubrics import RUBRIC_RESULT_KEY, RUBRIC_RUN_KIND
from qualspec.store import Store
from qualspec.testing import FakeServer
from qualspec.web import create_app

RUBRICS = [
    {
        "id": "rubric_001",
        "name": "Clear <b>Goals</b>",
        "description": "States the goal.",
        "scoring_criteria": "1: poor\n5: excellent",
        "weight": 2,
    },
    {
        "id": "rubric_002",
        "name": "Short Questions",
        "description": "Asks briefly.",
        "scoring_criteria": "1: poor\n5: excellent",
        "weight": 1,
    },
]


def _score(body: dict[str, Any]) -> str:
    prompt = str(body["messages"][-1]["content"])
    return "SCORE: 5\nREASONING: clear." if "Goals" in prompt else "SCORE: 2\nREASONING: long."


def _get(app: Any, *paths: str) -> list[httpx.Response]:
    async def go() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            out = [await c.get(p) for p in paths]
        await app.fastapi.state.web.aclose()
        return out

    return asyncio.run(go())


def test_judged_sessions_are_stored_and_shown_in_the_web_app(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_sessions(tmp_path / "sessions")
    rubrics = tmp_path / "rubrics.json"
    rubrics.write_text(json.dumps({"rubrics": RUBRICS}), encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'q.db'}"
    scores = tmp_path / "scores.json"
    with FakeServer(judge_reply=_score, answer=_score) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        with pytest.raises(SystemExit) as exc:
            main(
                [
                    "rubrics",
                    "judge",
                    str(folder),
                    "--rubrics",
                    str(rubrics),
                    "--out",
                    str(scores),
                    "--model",
                    "openai/judge",
                    "--db",
                    db,
                ]
            )
        assert exc.value.code == 0, capsys.readouterr().err
    written = json.loads(scores.read_text())

    with Store.open(db) as store:
        (run,) = [r for r in store.list_runs() if r.metadata.get("kind") == RUBRIC_RUN_KIND]
        # the run holds the very result the CLI wrote, and the judge's calls
        assert run.metadata[RUBRIC_RESULT_KEY] == written
        kinds = {r.kind for r in store.load_run(run.id).responses}
    assert kinds == {"rubric_judge"}

    listing, api, page, redirect = _get(
        create_app(db=db), "/rubrics", "/api/rubrics", f"/rubrics/{run.id}", f"/runs/{run.id}"
    )
    assert listing.status_code == 200 and "content-security-policy" in listing.headers
    text = listing.text
    assert "Clear &lt;b&gt;Goals&lt;/b&gt;" in text and "<b>Goals</b>" not in text
    row = re.search(rf"<tr><td><code>{ALPHA_ID}</code></td>(.*?)</tr>", text)
    assert row is not None, text
    cells = re.findall(r'<td class="num"[^>]*>([^<]*)</td>', row.group(1))
    assert cells == ["5", "2", "4.00", "2 of 2"]  # (2*5 + 2) / 3, both rubrics scored
    assert f'href="/rubrics/{run.id}"' in text

    (found,) = api.json()
    assert found["run_id"] == run.id and found["model"] == "openai/judge"
    alpha = next(s for s in found["sessions"] if s["session_id"] == ALPHA_ID)
    assert alpha["weighted_score"] == 4.0
    assert [s["score"] for s in alpha["scores"]] == [5, 2]

    assert page.status_code == 200 and "Sessions judged by rubric" in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert "<script" not in page.text
    assert redirect.status_code == 303 and redirect.headers["location"] == f"/rubrics/{run.id}"


def test_no_rubric_runs_is_said_plainly(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'empty.db'}"
    listing, api, missing = _get(create_app(db=db), "/rubrics", "/api/rubrics", "/rubrics/nope")
    assert listing.status_code == 200 and "No rubric scores" in listing.text
    assert api.json() == [] and missing.status_code == 404
