"""What was sent, from the stored input row (issue 19): the run page's expanded answer shows
the row (indented JSON, escaped, cut at 10,000 characters with a note) and the prompt as
sent, rendered with it; a run recorded before rows were stored says so; the reference
review page shows the stored row even when the suite file is gone."""

from __future__ import annotations

import asyncio
import html
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from qualspec.store import ResponseRecord, Store
from qualspec.web import create_app

PREAMBLE = "I am new to this."
TEMPLATE = "Describe {{ company }} in one line. Notes: {{ notes }}"
XSS = "<script>alert('row')</script>"
ROWS = {
    "acme": {"id": "acme", "company": "Acme Corp", "notes": XSS},
    "big": {"id": "big", "company": "Globex", "notes": "y" * 30_000},
}
WHEN = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _get(db: str, *paths: tuple[str, dict[str, str]]) -> list[httpx.Response]:
    async def fetch() -> list[httpx.Response]:
        app = create_app(db=db)
        transport = httpx.ASGITransport(app=app)
        out = []
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                for path, params in paths:
                    out.append(await c.get(path, params=params))
        finally:
            await app.fastapi.state.web.aclose()
        return out

    return asyncio.run(fetch())


def _record(key: str, input_id: str, values: Any, versions: dict[str, int], **kw: Any) -> Any:
    fields: dict[str, Any] = {
        "key": key,
        "candidate": "small",
        "role": "naive",
        "scenario": "describe",
        "input_id": input_id,
        "temperature": 0.0,
        "effective_temperature": 0.0,
        "run_index": 0,
        "provider": "fake",
        "model": "small",
        "text": f"An answer about {input_id}.",
        "finish_reason": "stop",
        "prompt_versions": versions,
        "created_at": WHEN,
        "input_values": values,
    }
    fields.update(kw)
    return ResponseRecord(**fields)


def _seed(db: str, *, stored: bool, suite: Path | None = None) -> str:
    """A finished run of scenario ``describe`` over ``ROWS`` (with their values when
    ``stored``, as a run from before rows were kept otherwise), with a reference."""
    meta: dict[str, Any] = {"suite_path": str(suite)} if suite else {}
    with Store.open(db) as store:
        run_id = store.create_run("Rows", "h", meta)
        parts = [("preamble:naive", PREAMBLE), ("scenario_prompt:describe", TEMPLATE)]
        ids = dict(zip([n for n, _ in parts], store.prompt_versions_many(parts), strict=True))
        records = [
            _record(f"c-{i}", i, dict(v) if stored else None, dict(ids)) for i, v in ROWS.items()
        ]
        records.append(
            _record(
                "ref-acme",
                "acme",
                dict(ROWS["acme"]) if stored else None,
                {"scenario_prompt:describe": ids["scenario_prompt:describe"]},
                kind="reference",
                candidate="reference",
                role=None,
                call_key="ck-rows-acme-0123456789",
                text='{"name": "Acme Corp"}',
            )
        )
        store.record_responses(run_id, records)
        store.finish_run(run_id, "finished")
    return run_id


def _details(page: str) -> list[str]:
    return re.findall(r'<details class="resp" id="a\d+">(.*?)</details>', page, re.DOTALL)


def _dd(body: str, term: str) -> str:
    found = re.search(rf"<dt>{re.escape(term)}</dt><dd>(.*?)</dd>", body, re.DOTALL)
    assert found is not None, term
    return found.group(1)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'rows.db'}"


def test_an_answer_shows_its_stored_row_and_the_prompt_as_sent(db: str) -> None:
    run_id = _seed(db, stored=True)
    (page,) = _get(db, (f"/runs/{run_id}", {"input": "acme"}))
    assert page.status_code == 200
    assert XSS not in page.text  # the row's script is text on the page, never markup
    (body,) = _details(page.text)
    row = _dd(body, "input row")
    assert json.loads(html.unescape(re.sub(r"</?pre[^>]*>", "", row))) == ROWS["acme"]
    assert '\n  "company": "Acme Corp",\n' in html.unescape(row)  # indented
    assert "&lt;script&gt;" in row
    sent = html.unescape(_dd(body, "prompt sent"))
    assert sent == (
        f'<pre class="doc">{PREAMBLE}\n\nDescribe Acme Corp in one line. Notes: {XSS}</pre>'
    )
    assert "not stored" not in body


def test_a_large_row_is_cut_on_the_page_and_kept_whole_in_the_store(db: str) -> None:
    run_id = _seed(db, stored=True)
    (page,) = _get(db, (f"/runs/{run_id}", {"input": "big"}))
    (body,) = _details(page.text)
    row = html.unescape(_dd(body, "input row"))
    shown = re.search(r'<pre class="doc row">(.*?)</pre>', row, re.DOTALL)
    assert shown is not None and len(shown.group(1)) == 10_000
    assert "the first 10,000 of" in row and "the store keeps it whole" in row
    assert "the first 10,000 of" in html.unescape(_dd(body, "prompt sent"))
    with Store.open(db) as store:
        (big,) = [r for r in store.load_run(run_id).responses if r.input_id == "big"]
    assert big.input_values == ROWS["big"]


def test_search_finds_an_answer_by_a_value_of_its_row(db: str) -> None:
    run_id = _seed(db, stored=True)
    (page,) = _get(db, (f"/runs/{run_id}", {"q": "Globex"}))
    (body,) = _details(page.text)
    assert "Describe Globex" in html.unescape(body)


def test_an_answer_recorded_before_rows_were_stored_says_so(db: str) -> None:
    run_id = _seed(db, stored=False)
    (page,) = _get(db, (f"/runs/{run_id}", {"input": "acme"}))
    (body,) = _details(page.text)
    assert "not stored: this answer was recorded before qualspec kept input rows" in body
    template = html.unescape(_dd(body, "prompt (template)"))
    assert TEMPLATE in template and "sent rendered with input row acme" in template
    assert "prompt sent" not in body


def test_the_review_page_shows_the_stored_row_without_the_suite(db: str, tmp_path: Path) -> None:
    _seed(db, stored=True, suite=tmp_path / "gone.yaml")  # the suite file does not exist
    (page,) = _get(db, ("/references/ck-rows-acme-0123456789", {}))
    assert page.status_code == 200 and XSS not in page.text
    row = re.search(r'<pre class="doc" id="source-row">(.*?)</pre>', page.text, re.DOTALL)
    assert row is not None and json.loads(html.unescape(row.group(1))) == ROWS["acme"]
    note = re.search(r'<p class="muted" id="source-note">(.*?)</p>', page.text, re.DOTALL)
    assert note is not None and note.group(1) == "Stored with the run that made it."
    sent = re.search(r'<pre class="doc" id="source-sent">(.*?)</pre>', page.text, re.DOTALL)
    assert sent is not None
    assert html.unescape(sent.group(1)) == f"Describe Acme Corp in one line. Notes: {XSS}"


def test_the_review_page_of_an_old_run_says_the_row_was_not_stored(db: str) -> None:
    _seed(db, stored=False)
    (page,) = _get(db, ("/references/ck-rows-acme-0123456789", {}))
    note = re.search(r'<p class="muted" id="source-note">(.*?)</p>', page.text, re.DOTALL)
    assert note is not None
    assert "recorded before qualspec kept input rows" in html.unescape(note.group(1))
    assert 'id="source-row"' not in page.text
