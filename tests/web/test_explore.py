"""The run page explores a run (issue 19, item 1): filters, search, sort and pages over its
answers, shared by URL; every FAIL with its cause; matrix cells linking to their answers;
an overview per candidate and the criteria and checks that fail most; what was sent.

The run is written straight to a store (``helpers_explore``): its failures and their causes
are known. Pages are read through the app in-process (httpx)."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers_explore import CHECK, PREAMBLES, PROMPT, SYSTEM, seed_explore_run

from qualspec.web import create_app


def _get(db: str, *paths: str | tuple[str, dict[str, str]]) -> list[httpx.Response]:
    async def fetch() -> list[httpx.Response]:
        app = create_app(db=db)
        transport = httpx.ASGITransport(app=app)
        out = []
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                for p in paths:
                    path, params = (p, {}) if isinstance(p, str) else p
                    out.append(await c.get(path, params=params))
        finally:
            await app.fastapi.state.web.aclose()
        return out

    return asyncio.run(fetch())


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(database URL, run id) of the seeded run."""
    work = tmp_path_factory.mktemp("explore")
    db = f"sqlite:///{work / 'explore.db'}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("QUALSPEC_HOME", str(work / "home"))
        yield db, seed_explore_run(db)


def _page(run: tuple[str, str], **params: str) -> str:
    db, run_id = run
    (found,) = _get(db, (f"/runs/{run_id}", params))
    assert found.status_code == 200, found.text
    return found.text


def _count(page: str) -> str:
    found = re.search(r'<p class="count" id="count">(.*?)</p>', page, re.DOTALL)
    assert found is not None
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def _rows(page: str) -> list[dict[str, str]]:
    """The answers table's rows: candidate, where, T, run, score, verdict, why."""
    out = []
    for m in re.finditer(r'<tr class="answer" data-verdict="(\w+)">(.*?)</tr>', page, re.DOTALL):
        cells = [
            html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", m.group(2), re.DOTALL)
        ]
        keys = ("candidate", "where", "t", "run", "score", "verdict", "why")
        out.append(dict(zip(keys, cells, strict=True)))
    return out


def test_failed_only_lists_every_failing_answer_each_with_its_cause(run: Any) -> None:
    page = _page(run, failed="1")
    assert _count(page).startswith("showing 1-8 of 8 matching (16 in the run)")
    rows = _rows(page)
    assert len(rows) == 8 and {r["verdict"] for r in rows} == {"FAIL"}
    assert all(r["why"] for r in rows)
    # beta scored 9 on every criterion: its FAIL is the check, said on the row
    beta = [r for r in rows if r["candidate"] == "beta"]
    assert len(beta) == 4 and {r["why"] for r in beta} == {f"check '{CHECK}' failed"}
    assert {r["score"] for r in beta} == {"9/10"}
    naive = [r for r in rows if r["candidate"] == "alpha" and "naive" in r["where"]]
    assert {r["why"] for r in naive} == {"score 6.5/10 < 7: clarity 4 < 7"}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"candidate": "beta", "temperature": "1"}, 4),
        ({"role": "expert", "candidate": "alpha"}, 4),
        ({"scenario": "capital"}, 16),
        ({"criterion": "clarity", "failed": "1"}, 4),  # where clarity itself failed
        ({"criterion": "accuracy", "failed": "1"}, 2),
        ({"check": CHECK, "failed": "1"}, 4),
        ({"check": CHECK}, 16),
        ({"evaluator": "expect", "failed": "1"}, 4),
        ({"q": "SEINE"}, 4),  # in the answers, any case
        ({"q": "not found"}, 4),  # in the checks' reasons
        ({"q": '"clarity rated 4"'}, 2),  # in the judge's reasoning, as a phrase
        ({"q": "rated SEINE"}, 4),  # every word, each anywhere (reasoning, answer)
        ({"q": "geography tutor"}, 8),  # in the system prompt (alpha's only)
        ({"q": "teach"}, 8),  # in the expert's preamble
        ({"q": "nowhere-to-be-found"}, 0),
        ({"failed": "1", "candidate": "alpha", "q": "clarity"}, 4),
    ],
)
def test_filters_and_search_narrow_the_answers(
    run: Any, params: dict[str, str], expected: int
) -> None:
    page = _page(run, **params)
    rows = _rows(page)
    assert len(rows) == expected
    if expected:
        assert _count(page).startswith(f"showing 1-{expected} of {expected} matching")
    else:
        assert _count(page).startswith("no answer matches")
    # the form shows the view it was asked for (shareable by URL)
    for name, value in params.items():
        if name == "q":
            shown = re.search(r'name="q" value="([^"]*)"', page)
            assert shown is not None and html.unescape(shown.group(1)) == value
        elif name == "failed":
            assert re.search(r'name="failed" value="1" checked', page)
        else:
            assert f'<option value="{html.escape(value)}" selected>' in page


def test_answers_come_in_pages_sorted_as_asked(run: Any) -> None:
    first = _page(run, per="5")
    assert _count(first).startswith("showing 1-5 of 16 matching")
    assert len(_rows(first)) == 5
    assert 'href="/runs/' in first and "page=4" in first
    last = _page(run, per="5", page="4")
    assert _count(last).startswith("showing 16-16 of 16 matching")
    past = _page(run, per="5", page="99")  # past the end: the last page
    assert _count(past).startswith("showing 16-16 of 16 matching")
    bad = _page(run, per="x", page="-3", sort="nonsense")  # unreadable: the defaults
    assert _count(bad).startswith("showing 1-16 of 16 matching")
    low = [r["score"] for r in _rows(_page(run, sort="score"))]
    assert low[:4] == ["6.5/10"] * 4 and low[-1] == "9/10"
    high = [r["score"] for r in _rows(_page(run, sort="-score"))]
    assert high[0] == "9/10" and high[-1] == "6.5/10"
    by_name = [r["candidate"] for r in _rows(_page(run, sort="candidate"))]
    assert by_name == sorted(by_name)


def test_every_matrix_cell_links_to_its_answers(run: Any) -> None:
    db, run_id = run
    page = _page(run)
    matrix = page[page.index('<section id="matrix">') : page.index('<section id="answers">')]
    links = re.findall(r'<td class="num (\w+)"[^>]*><a href="([^"]+)">([^<]*)</a></td>', matrix)
    assert len(links) == 8  # 2 roles x 2 candidates x 2 temperatures
    for css, href, text in links:
        assert css in ("pass", "fail") and text.endswith(css.upper())
        path, _, query = html.unescape(href).partition("?")
        params = dict(p.split("=", 1) for p in query.split("#")[0].split("&"))
        (found,) = _get(db, (path, {k: v.replace("+", " ") for k, v in params.items()}))
        rows = _rows(found.text)
        assert len(rows) == 2  # the cell's two runs
        assert all(r["t"] == params["temperature"] for r in rows)
        assert {r["verdict"] for r in rows} == ({"PASS"} if css == "pass" else {"FAIL"})


def test_a_red_score_always_says_why_and_never_reads_as_the_pass_mark(run: Any) -> None:
    from qualspec.web._explore import score_text

    assert score_text(6.96, 7.0) == "6.96/10"  # not "7/10" where 7 passes
    assert score_text(6.999, 7.0) == "6.999/10"
    assert score_text(7.0, 7.0) == "7/10"
    page = _page(run, candidate="alpha", role="expert")
    verdict = re.search(r'<td class="verdict (\w+)" data-verdict="(\w+)">(.*?)</td>', page, re.S)
    assert verdict is not None
    text = html.unescape(re.sub(r"<[^>]+>", "", verdict.group(3)))
    # the row's mean over its temperatures is 7 (the pass mark): it fails, and says where
    assert verdict.group(1) == "fail" and verdict.group(2) == "FAIL"
    assert text == "7/10 FAIL (at 1: 6.5/10 < 7)"


def test_the_overview_gives_each_candidate_and_the_most_failed_aspects(run: Any) -> None:
    page = _page(run)
    overview = page[page.index('<section id="overview">') : page.index('<section id="failing">')]
    text = html.unescape(re.sub(r"<[^>]+>", " ", overview))
    text = re.sub(r"\s+", " ", text)
    assert "alpha 50% 2 of 4 cells" in text and "beta 50% 2 of 4 cells" in text
    assert "9.00/10 n 8" in text  # beta's answers all scored 9
    assert "7.12/10 n 8" in text  # alpha: 8, 8, 6.5, 6.5, 7.5, 7.5, 6.5, 6.5 ... mean 7.125
    assert "$0.0080" in text and "160 / 96" in text
    assert "4 of 8 cells with a verdict passed" in text
    failing = page[page.index('<section id="failing">') : page.index('<section id="matrix">')]
    rows = re.findall(
        r"<tr><td>(.*?)</td><td>(\w+)</td><td class=\"num\"><a href=\"([^\"]+)\">(\d+)</a>",
        failing,
    )
    shown = [(html.unescape(re.sub(r"<[^>]+>", "", a)), b, int(n)) for a, b, _h, n in rows]
    assert shown == [
        ("clarity", "criteria", 4),
        (f"check {CHECK}", "expect", 4),
        ("accuracy", "criteria", 2),
    ]
    # each count links to exactly the answers it counts
    for _a, _b, href, n in rows:
        path, _, query = html.unescape(href).partition("?")
        params = dict(p.split("=", 1) for p in query.split("#")[0].split("&"))
        (found,) = _get(run[0], (path, {k: v.replace("+", " ") for k, v in params.items()}))
        assert len(_rows(found.text)) == int(n)


def test_an_answer_shows_what_was_sent_and_every_verdict(run: Any) -> None:
    page = _page(run, candidate="alpha", role="naive", temperature="1")
    details = re.findall(r'<details class="resp" id="a\d+">(.*?)</details>', page, re.DOTALL)
    assert len(details) == 2
    body = html.unescape(details[0])
    assert f'<pre class="doc">{SYSTEM}</pre>' in body
    assert f'<pre class="doc">{PREAMBLES["naive"]}</pre>' in body
    assert f'<pre class="doc">{PREAMBLES["naive"]}\n\n{PROMPT}</pre>' in body  # as sent
    for criterion, verdict, reason in (
        ("clarity", "FAIL", "clarity rated 4"),
        ("accuracy", "PASS", "accuracy rated 9"),
        (CHECK, "PASS", "found 'paris'"),
    ):
        row = re.search(rf"<td>{re.escape(criterion)}</td>(.*?)</tr>", body, re.DOTALL)
        assert row is not None and verdict in row.group(1) and reason in row.group(1)
    beta = _page(run, candidate="beta")
    assert "none</span>" in beta  # beta had no system prompt: said so


def test_a_large_run_opens_as_one_page_of_answers(tmp_path: Path) -> None:
    """The page holds one page of answers and of matrix rows, whatever the run's size."""
    db = f"sqlite:///{tmp_path / 'big.db'}"
    small_id = seed_explore_run(db)
    big_id = seed_explore_run(db, inputs=150, suite="Big")  # 2,416 answers
    small, big = _get(db, f"/runs/{small_id}", f"/runs/{big_id}")
    assert _count(big.text).startswith("showing 1-50 of 2416 matching")
    assert len(_rows(big.text)) == 50
    assert big.text.count('<tr class="mrow"') == 50
    assert "rows 1-50 of 604" in big.text
    assert len(big.text) < 4 * len(small.text)
    (failed,) = _get(db, (f"/runs/{big_id}", {"failed": "1", "page": "3"}))
    assert _count(failed.text).startswith("showing 101-150 of 1208 matching")
    # an answer to an input row: the template, and which row it was rendered with
    (row,) = _get(db, (f"/runs/{big_id}", {"input": "row00007", "candidate": "beta", "per": "1"}))
    shown = html.unescape(row.text)
    assert '<dt>prompt (template)</dt><dd><pre class="doc">Describe {name}.</pre>' in shown
    assert "sent rendered with input row row00007, after the preamble" in shown


def test_the_runs_list_gives_pass_rate_and_score(run: Any) -> None:
    db, run_id = run
    (runs,) = _get(db, "/runs")
    row = re.search(rf'<tr><td class="nowrap"><a href="/runs/{run_id}">.*?</tr>', runs.text, re.S)
    assert row is not None
    cells = [
        html.unescape(re.sub(r"<[^>]+>", "", c))
        for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(0))
    ]
    assert "50% (4/8)" in cells
    assert "8.06/10" in cells  # the mean of the cells' scores


def test_the_run_page_keeps_the_strict_csp_and_runs_no_script(run: Any) -> None:
    db, run_id = run
    page, report = _get(db, f"/runs/{run_id}", f"/runs/{run_id}/report")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "<script" not in page.text and " on" not in re.sub(r"[^<]*", "", page.text)
    assert (
        report.status_code == 200
        and "script-src 'none'" in report.headers["content-security-policy"]
    )
    assert f'href="/runs/{run_id}/report"' in page.text
