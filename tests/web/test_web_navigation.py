"""Finding one's way in the web app (issue 19, "Navigation"), through httpx: an unknown run
(reference, rubric run, page) is an HTML page with the nav bar for a browser and JSON for
an API client; rubric pages have the nav bar, name their rubrics and rank partially
scored sessions after fully scored ones, saying so; a long note cannot widen the
references table; token mode has a login form; Lab runs do not flood the runs list."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from helpers_web import KEY_ENV, lab_body, providers, seed_reference

from qualspec.rubrics import RUBRIC_RESULT_KEY, RUBRIC_RUN_KIND
from qualspec.store import Store
from qualspec.testing import FakeServer, LabScript
from qualspec.web import create_app

pytestmark = pytest.mark.asyncio
TOKEN = "s3cret-token-0123456789"
KEY = "ck-acme-0123456789"
HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
NAV = '<nav class="toc app">'
RUBRICS = [
    {"id": "rubric_001", "name": "Clear Goals", "weight": 1.0},
    {"id": "rubric_002", "name": "Test Requests", "weight": 1.0},
    {"id": "rubric_003", "name": "Short Questions", "weight": 1.0},
]


def _session(session_id: str, scores: list[int | None]) -> dict[str, Any]:
    entries = [
        {
            "rubric_id": r["id"],
            "name": r["name"],
            "score": score,
            "reasoning": "why" if score is not None else None,
            "unscored_reason": None if score is not None else "no SCORE line",
        }
        for r, score in zip(RUBRICS, scores, strict=True)
    ]
    scored = [s for s in scores if s is not None]
    return {
        "session_id": session_id,
        "scores": entries,
        "n_scored": len(scored),
        "weighted_score": round(sum(scored) / len(scored), 3) if scored else None,
        "metrics": {"turns": 3, "tokens": 100, "code_growth": 1},
    }


def _seed_rubric_run(db: str) -> str:
    """A rubric run: one session scored by 1 of 3 rubrics (at 5), one by all 3 (mean 4),
    one by none; stored in that order."""
    result = {
        "version": 1,
        "kind": "rubric_judgments",
        "model": "fake/judge",
        "rubrics": [
            {**r, "description": "d", "scoring_criteria": "1: poor\n5: good"} for r in RUBRICS
        ],
        "sessions": [
            _session("sess-partial", [5, None, None]),
            _session("sess-full", [4, 4, 4]),
            _session("sess-none", [None, None, None]),
        ],
    }
    with Store.open(db) as store:
        run_id = store.create_run(
            "(rubrics)", "h", {"kind": RUBRIC_RUN_KIND, RUBRIC_RESULT_KEY: result}
        )
        store.finish_run(run_id, "finished")
    return run_id


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv(KEY_ENV, "sk-web")
    script = LabScript(scores=[0.9])
    with FakeServer(judge_reply=script.evaluate, answer=script.generate) as srv:
        yield srv


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'web.db'}"
    seed_reference(url, KEY)
    return url


def _client(app: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")


@pytest_asyncio.fixture
async def client(server: FakeServer, db: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(db=db, providers=providers(server))
    async with _client(app) as c:
        yield c
    await app.fastapi.state.web.aclose()


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/runs/nope-nope", "no run with id 'nope-nope'"),
        ("/rubrics/nope-nope", "no run with id 'nope-nope'"),
        ("/references/nope-nope", "no reference answer with id 'nope-nope'"),
        ("/nowhere", "Not Found"),
    ],
)
async def test_a_missing_page_is_html_with_the_nav_bar_for_a_browser(
    client: httpx.AsyncClient, path: str, said: str
) -> None:
    page = await client.get(path, headers=HTML)
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert NAV in page.text and '<a href="/runs">Runs</a>' in page.text
    assert said in page.text.replace("&#39;", "'")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert "<script" not in page.text
    # an API client (httpx's Accept: */*) keeps the JSON
    api = await client.get(path)
    assert api.status_code == 404 and said in api.json()["detail"]


async def test_the_api_answers_json_even_to_a_browser(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/runs/nope-nope", headers=HTML)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert "no run with id 'nope-nope'" in response.json()["detail"]


async def test_the_rubric_pages_have_the_nav_bar_names_and_coverage(
    client: httpx.AsyncClient, db: str
) -> None:
    run_id = _seed_rubric_run(db)
    page = await client.get(f"/rubrics/{run_id}", headers=HTML)
    assert page.status_code == 200
    text = page.text
    assert NAV in text and '<a href="/rubrics">Rubrics</a>' in text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert "<script" not in text
    header = re.search(r"<thead>(.*?)</thead>", text, re.S)
    assert header is not None
    names = re.findall(r"<th[^>]*>([^<]*)</th>", header.group(1))
    assert names[:4] == ["session", "Clear Goals", "Test Requests", "Short Questions"]
    assert "rubric_001" not in names
    # ranked: every rubric scored first, then partial (marked), then unscored
    body = text[text.index("<tbody>") : text.index("</tbody>")]
    order = re.findall(r"sess-(full|partial|none)", body)
    assert order == ["full", "partial", "none"]
    partial = re.search(r"<tr><td class=\"mono\">sess-partial</td>(.*?)</tr>", body)
    assert partial is not None
    assert "partial</span>" in partial.group(1) and "1 of 3" in partial.group(1)
    assert body.count("partial</span>") == 1  # not the unscored session: it has no score
    assert "a session only some rubrics scored follows" in text

    listing = (await client.get("/rubrics")).text
    rows = re.findall(r"<tr><td><code>sess-(\w+)</code></td>(.*?)</tr>", listing)
    assert [name for name, _ in rows] == ["full", "partial", "none"]
    cells = dict(rows)
    assert "3 of 3" in cells["full"] and "1 of 3" in cells["partial"]
    assert "partial</span>" in cells["partial"] and "partial</span>" not in cells["full"]
    assert "partial</span>" not in cells["none"] and "0 of 3" in cells["none"]
    (found,) = (await client.get("/api/rubrics")).json()
    assert [(s["session_id"], s["n_scored"]) for s in found["sessions"]] == [
        ("sess-full", 3),
        ("sess-partial", 1),
        ("sess-none", 0),
    ]


async def test_a_long_note_is_cut_in_the_list_and_wraps(client: httpx.AsyncClient) -> None:
    note = "n" * 10_000
    changed = await client.post(
        f"/api/references/{KEY}/status", json={"status": "disputed", "notes": note}
    )
    assert changed.status_code == 200
    listing = (await client.get("/references")).text
    cell = re.search(r'<td class="notes">([^<]*)</td>', listing)
    assert cell is not None and len(cell.group(1)) <= 160 and cell.group(1).endswith("…")
    page = (await client.get(f"/references/{KEY}")).text
    assert note in page and '<p class="wrap">Notes:' in page  # whole on its own page
    css = (await client.get("/static/web.css")).text
    assert "table.references td,table.audit td.notes,.wrap{overflow-wrap:anywhere}" in css
    assert "table.references td.notes,table.audit td.notes{min-width:12ch;max-width:40ch}" in css


async def test_lab_runs_are_hidden_from_the_runs_list_unless_asked_for(
    client: httpx.AsyncClient,
) -> None:
    result = (await client.post("/api/generate-answer", json=lab_body(iter_max=1))).json()
    lab_run = result["metadata"]["run_id"]
    runs = (await client.get("/runs")).text
    assert lab_run not in runs and 'href="/runs?lab=1"' in runs
    assert "profiles" in runs  # the suite run is still listed
    shown = (await client.get("/runs", params={"lab": "1"})).text
    assert lab_run in shown and "profiles" in shown
    # the API lists every run, with its kind
    assert {r["kind"] for r in (await client.get("/api/runs")).json()} == {"lab", "suite"}


async def test_token_mode_has_a_login_form(server: FakeServer, db: str) -> None:
    app = create_app(db=db, providers=providers(server), token=TOKEN)
    async with _client(app) as c:
        form = await c.get("/login", headers=HTML)
        assert form.status_code == 200
        assert '<form class="lab login" method="post" action="/login"' in form.text
        assert 'type="password" name="token"' in form.text and "<script" not in form.text
        assert "default-src 'none'" in form.headers["content-security-policy"]
        # its stylesheets load without the token; nothing else does
        assert (await c.get("/static/web.css")).status_code == 200
        assert (await c.get("/static/lab.js")).status_code == 401
        # a browser asking for a page gets the form, coming back to that page after it
        page = await c.get("/references", params={"status": "disputed"}, headers=HTML)
        assert page.status_code == 401 and 'action="/login"' in page.text
        assert 'name="next" value="/references?status=disputed"' in page.text
        assert (await c.get("/api/runs", headers=HTML)).json()["detail"].startswith("a token")
        # a wrong token: the form again, no cookie
        wrong = await c.post("/login", data={"token": "nope", "next": "/references"})
        assert wrong.status_code == 401 and "wrong token" in wrong.text
        assert "set-cookie" not in wrong.headers
        # a post from another site is refused before the token is read
        for headers in ({"sec-fetch-site": "cross-site"}, {"origin": "http://evil.example"}):
            other = await c.post("/login", data={"token": TOKEN}, headers=headers)
            assert other.status_code == 403 and "set-cookie" not in other.headers
        # the right one: the cookie, then the page asked for (never another site)
        good = await c.post("/login", data={"token": TOKEN, "next": "//evil.example"})
        assert (good.status_code, good.headers["location"]) == (303, "/runs")
        assert "HttpOnly" in good.headers["set-cookie"]
        good = await c.post("/login", data={"token": TOKEN, "next": "/references?x=1"})
        assert good.headers["location"] == "/references?x=1"
        assert (await c.get("/references", headers=HTML)).status_code == 200
    assert server.calls == 0
    await app.fastapi.state.web.aclose()
