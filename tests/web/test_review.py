"""The reference review page shows the reference's source, pretty JSON and field-level
diffs (issue 19, item 3): the prompt parts it was made from and the input row (read from
the run's YAML suite, saying whether that file changed since, or what is missing), the
answers indented, the override against the model's answer field by field, and a
candidate's answer of the same input against the reference graders use."""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers_review import CALL_KEY, DESCRIPTION, PROMPT, SYSTEM, seed_review_run
from helpers_web import seed_reference

from qualspec.web import create_app


def _call(db: str, *steps: tuple[str, str, dict[str, Any]]) -> list[httpx.Response]:
    async def go() -> list[httpx.Response]:
        app = create_app(db=db)
        transport = httpx.ASGITransport(app=app)
        out = []
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                for method, path, kw in steps:
                    out.append(await c.request(method, path, **kw))
        finally:
            await app.fastapi.state.web.aclose()
        return out

    return asyncio.run(go())


@pytest.fixture
def seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """(database URL, suite file) of a fresh reference-graded run."""
    monkeypatch.setenv("QUALSPEC_HOME", str(tmp_path / "home"))
    db = f"sqlite:///{tmp_path / 'review.db'}"
    _run_id, path = seed_review_run(db, tmp_path)
    return db, path


def _block(page: str, ident: str) -> str:
    found = re.search(rf'<(pre|p|table)[^>]* id="{ident}"[^>]*>(.*?)</\1>', page, re.DOTALL)
    assert found is not None, ident
    return html.unescape(found.group(2))


def _fields(page: str, ident: str) -> dict[str, tuple[str, str, str]]:
    rows = re.findall(
        r'<tr class="field [^"]*" data-status="([^"]+)"><td><code>([^<]*)</code></td>'
        r'<td class="value">([^<]*)</td><td class="value">([^<]*)</td>',
        _block_raw(page, ident),
    )
    return {path: (html.unescape(a), html.unescape(b), s) for s, path, a, b in rows}


def _block_raw(page: str, ident: str) -> str:
    found = re.search(rf'<table[^>]* id="{ident}"[^>]*>(.*?)</table>', page, re.DOTALL)
    assert found is not None, ident
    return found.group(1)


def _page(db: str, **params: str) -> str:
    (got,) = _call(db, ("GET", f"/references/{CALL_KEY}", {"params": params}))
    assert got.status_code == 200, got.text
    return got.text


def test_the_source_the_reference_was_made_from(seeded: tuple[str, Path]) -> None:
    db, path = seeded
    page = _page(db)
    assert _block(page, "source-system") == SYSTEM
    assert _block(page, "source-prompt") == PROMPT
    assert '"description": "' + DESCRIPTION + '"' in _block(page, "source-row")
    assert _block(page, "source-sent").endswith("Company: " + DESCRIPTION)
    assert "unchanged since the run" in _block(page, "source-note")
    # the suite edited since: the row as it reads now, and the page says so
    path.write_text(path.read_text().replace("since 1947", "since 1950"), encoding="utf-8")
    page = _page(db)
    assert "since 1950" in _block(page, "source-row")
    assert "has changed since the run" in _block(page, "source-note")
    # the suite gone: what is missing is said, the prompt parts still shown
    path.unlink()
    page = _page(db)
    assert 'id="source-row"' not in page and _block(page, "source-prompt") == PROMPT
    note = _block(page, "source-note")
    assert "not the row's values" in note and "cannot be read now" in note


def test_a_python_suite_is_never_run_for_the_page(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("QUALSPEC_HOME", str(tmp_path / "home"))
    db = f"sqlite:///{tmp_path / 'review.db'}"
    seed_review_run(db, tmp_path)
    probe = tmp_path / "ran"
    suite = tmp_path / "suite.py"
    suite.write_text(f"open({str(probe)!r}, 'w').write('ran')\n", encoding="utf-8")
    import sqlite3

    with sqlite3.connect(tmp_path / "review.db") as con:  # point the run at the .py suite
        (meta,) = con.execute("select metadata from runs").fetchone()
        con.execute("update runs set metadata = ?", (meta.replace("profiles.yaml", "suite.py"),))
    page = _page(db)
    assert not probe.exists()
    assert "is Python, which a page never runs" in _block(page, "source-note")


def test_answers_pretty_printed_and_a_candidates_answer_diffed_field_by_field(
    seeded: tuple[str, Path],
) -> None:
    db, _ = seeded
    page = _page(db)
    assert '\n  "industry": "retail",\n' in _block(page, "ref-answer")
    assert '\n  "industry": "manufacturing",\n' in _block(page, "candidate-answer")  # fenced
    assert _fields(page, "answer-diff") == {
        "name": ('"Acme Corp"', '"Acme Corp"', "same"),
        "industry": ('"retail"', '"manufacturing"', "changed"),
        "founded_year": ("1947", "1948", "changed"),
        "tags[0]": ('"anvils"', "", "missing"),
    }
    other = _page(db, answer="candidate-small-1")  # the answer equal to the reference
    assert {s for _, _, s in _fields(other, "answer-diff").values()} == {"same"}


def test_the_override_against_the_models_answer_and_the_answer_against_the_override(
    seeded: tuple[str, Path],
) -> None:
    db, _ = seeded
    fixed = '{"name": "Acme Corp", "industry": "manufacturing", "founded_year": 1947}'
    saved, page = _call(
        db,
        ("POST", f"/references/{CALL_KEY}/override", {"data": {"answer": fixed}}),
        ("GET", f"/references/{CALL_KEY}", {}),
    )
    assert saved.status_code == 303
    text = page.text
    assert '\n  "industry": "manufacturing",\n' in _block(text, "ref-answer")
    assert _fields(text, "override-diff") == {
        "name": ('"Acme Corp"', '"Acme Corp"', "same"),
        "industry": ('"retail"', '"manufacturing"', "changed"),
        "founded_year": ("1947", "1947", "same"),
        "tags[0]": ('"anvils"', "", "missing"),
    }
    audit = re.findall(r'<pre class="cell">([^<]*)</pre>', text)
    assert '\n  "industry": "manufacturing",\n' in html.unescape(audit[1])  # pretty there too
    # the candidate is compared with what graders use now: the override
    assert _fields(text, "answer-diff")["industry"] == (
        '"manufacturing"',
        '"manufacturing"',
        "same",
    )


def test_a_reference_without_prompt_parts_or_suite_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUALSPEC_HOME", str(tmp_path / "home"))
    db = f"sqlite:///{tmp_path / 'bare.db'}"
    seed_reference(db)
    (got,) = _call(db, ("GET", "/references/ck-acme-0123456789", {}))
    assert got.status_code == 200
    note = _block(got.text, "source-note")
    assert "not the row's values" in note and "recorded no suite file" in note
    assert '"name": "Acme"' in _block(got.text, "ref-answer")


def test_a_reference_made_by_a_real_run_shows_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the engine (the fake server as every model): the page finds the reference's
    own prompt parts and its row, and diffs the candidate's answer against it."""
    import json

    from qualspec.cli import main
    from qualspec.store import Store
    from qualspec.testing import FakeServer

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUALSPEC_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FAKE_REVIEW_KEY", "sk-review")

    def reply(body: dict[str, Any]) -> str:
        model, text = str(body["model"]), str(body["messages"][-1]["content"])
        if model == "grader":
            grade = {"accuracy": 100, "match": "exact", "explanation": "-", "confidence": 0.9}
            return json.dumps({"fields": {"name": grade, "industry": grade}})
        company = text.rsplit(" ", 1)[-1]
        return json.dumps({"name": company, "industry": "SaaS" if model == "ref" else "Tools"})

    db = f"sqlite:///{tmp_path / 'real.db'}"
    with FakeServer(judge_reply=reply) as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(
            "name: profiles\ncandidates: [{name: bot, model: fake/bot}]\nscenarios:\n"
            "  - name: profile\n    system_prompt: Answer in JSON.\n"
            '    prompt: "Extract the profile. Company: {{ company }}"\n'
            "    inputs: [{id: acme, company: acme}]\n    reference: {model: fake/ref}\n"
            "    output_schema: {fields: [{name: name}, {name: industry}]}\n"
            "grader: {model: fake/grader}\nproviders:\n"
            f'  fake: {{type: openai, base_url: "{server.base_url}", '
            "api_key_env: FAKE_REVIEW_KEY}\n",
            encoding="utf-8",
        )
        with pytest.raises(SystemExit) as done:
            main(["run", str(suite), "--quiet", "--no-calibration", "--db", db])
        assert done.value.code in (0, 1)
    with Store.open(db) as store:
        (ref,) = store.reference_answers()
    (got,) = _call(db, ("GET", f"/references/{ref.call_key}", {}))
    page = got.text
    assert _block(page, "source-system") == "Answer in JSON."
    assert _block(page, "source-prompt") == "Extract the profile. Company: {{ company }}"
    assert '"company": "acme"' in _block(page, "source-row")
    assert _block(page, "source-sent") == "Extract the profile. Company: acme"
    assert _fields(page, "answer-diff")["industry"] == ('"SaaS"', '"Tools"', "changed")


def test_a_row_from_an_inputs_file_says_it_is_read_as_it_is_now(
    seeded: tuple[str, Path],
) -> None:
    db, path = seeded
    (path.parent / "rows.csv").write_text(
        "id,description\nacme,Acme Corp builds rockets.\n", encoding="utf-8"
    )
    text = path.read_text(encoding="utf-8")
    start = text.index("    inputs:")
    end = text.index("    reference:")
    path.write_text(text[:start] + "    inputs: rows.csv\n" + text[end:], encoding="utf-8")
    page = _page(db)
    assert '"description": "Acme Corp builds rockets."' in _block(page, "source-row")
    note = _block(page, "source-note")
    assert "has changed since the run" in note and "inputs file rows.csv" in note
