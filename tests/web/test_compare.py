"""The diff page compares two runs side by side (issue 19, item 2): per tuple each side's
verdict (``run_verdicts``'s) linking to its answers in the run explorer, per-criterion and
per-check deltas, the answers' texts side by side, an HTTP 500 labelled as an error (not
"unscored"), and a run picker that offers the first run's suite only unless asked.

The runs are written straight to a store (``helpers_compare``); pages are read in-process."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from helpers_compare import CHECK, HTTP_500, seed_compare_runs

from qualspec.analysis import diff_runs, run_verdicts
from qualspec.store import Store
from qualspec.web import create_app


def _get(db: str, path: str, **params: str) -> httpx.Response:
    async def fetch() -> httpx.Response:
        app = create_app(db=db)
        transport = httpx.ASGITransport(app=app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                return await c.get(path, params=params)
        finally:
            await app.fastapi.state.web.aclose()

    return asyncio.run(fetch())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str, str]]:
    """(database URL, run A, run B, a run of another suite)."""
    work = tmp_path_factory.mktemp("compare")
    db = f"sqlite:///{work / 'compare.db'}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("QUALSPEC_HOME", str(work / "home"))
        yield (db, *seed_compare_runs(db))


def _tuples(page: str) -> dict[str, dict[str, Any]]:
    """candidate -> its row: status, A and B (text and link), and the detail below it."""
    out: dict[str, dict[str, Any]] = {}
    pattern = (
        r'<tr class="tuple [^"]*" data-status="([^"]+)"><td>.*?</td><td>([^<]+)</td>.*?'
        r'<td class="side [^"]*" data-side="1">(.*?)</td><td class="side [^"]*" data-side="2">'
        r'(.*?)</td><td class="num">([^<]*)</td></tr>\s*<tr class="detail">'
        r"(.*?)</details></td></tr>"
    )
    for status, candidate, a, b, delta, detail in re.findall(pattern, page, re.DOTALL):
        out[candidate] = {"status": status, "a": a, "b": b, "delta": delta, "detail": detail}
    return out


def _words(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def test_an_http_500_is_an_error_with_its_message_not_unscored(
    runs: tuple[str, str, str, str],
) -> None:
    db, a, b, _ = runs
    page = _get(db, "/diff", a=a, b=b).text
    beta = _tuples(page)["beta"]
    assert beta["status"] == "error"
    assert _words(beta["b"]) == f"error: {HTTP_500}"
    assert "unscored" not in _words(beta["b"]).lower()
    assert 'class="badge error"' in page and ">error 1<" in page


def test_each_side_links_to_its_answers_in_the_run_explorer(
    runs: tuple[str, str, str, str],
) -> None:
    db, a, b, _ = runs
    page = _get(db, "/diff", a=a, b=b).text
    alpha = _tuples(page)["alpha"]
    for run_id, side in ((a, alpha["a"]), (b, alpha["b"])):
        (href,) = re.findall(r'href="([^"]+)"', side)
        href = html.unescape(href)
        assert href == (
            f"/runs/{run_id}?scenario=capital&input=-&role=-&candidate=alpha&temperature=0#answers"
        )
        # the link opens exactly that tuple's two answers, with the same verdict
        explored = _get(
            db,
            href.split("?")[0],
            **dict(p.split("=") for p in href.split("?")[1].split("#")[0].split("&")),
        ).text
        assert "showing 1-2 of 2 matching" in explored


def test_per_criterion_and_per_check_deltas_and_texts_side_by_side(
    runs: tuple[str, str, str, str],
) -> None:
    db, a, b, _ = runs
    rows = _tuples(_get(db, "/diff", a=a, b=b).text)
    alpha = rows["alpha"]["detail"]
    assert re.search(
        r'aspect down"><td>clarity</td><td>criteria</td>'
        r'<td class="num">8.00</td><td class="num">5.00</td><td class="num">-3.00<',
        alpha,
    )
    assert re.search(r'aspect same"><td>accuracy</td>.*?\+0.00', alpha)
    gamma = rows["gamma"]
    assert gamma["status"] == "new_fail" and "9.00 FAIL" in _words(gamma["b"])
    assert f"check &#39;{CHECK}&#39; failed in 2 of 2" in gamma["b"]
    assert re.search(
        r'aspect down"><td>check <code>icontains paris</code></td><td>expect</td>'
        r'<td class="num">2/2 pass</td><td class="num">0/2 pass</td>',
        gamma["detail"],
    )
    texts = re.findall(r'<pre class="answer">([^<]*)</pre>', gamma["detail"])
    assert texts[:2] == [
        "The capital is Paris (gamma, A).",
        "A lovely city on the Seine (gamma, B).",
    ]
    assert rows["delta"]["status"] == "improved" and rows["delta"]["delta"] == "+1.50"


def test_the_page_shows_the_runs_own_verdicts(runs: tuple[str, str, str, str]) -> None:
    """One verdict everywhere: each side's PASS/FAIL/ERROR is ``run_verdicts``'s cell."""
    db, a, b, _ = runs
    rows = _tuples(_get(db, "/diff", a=a, b=b).text)
    with Store.open(db) as store:
        cells_b = run_verdicts(store.load_run(b)).cells
        diff = diff_runs(store.load_run(a), store.load_run(b))
    for (_scenario, _input, _role, candidate, _t), cell in cells_b.items():
        assert cell.label in _words(rows[candidate]["b"]).upper() or cell.label == "ERROR"
    assert len(rows) == len(diff.changes) == 5


def test_an_error_among_a_cells_answers_is_named_beside_its_verdict(
    runs: tuple[str, str, str, str],
) -> None:
    db, a, b, _ = runs
    epsilon = _tuples(_get(db, "/diff", a=a, b=b).text)["epsilon"]
    assert epsilon["status"] == "unchanged"
    assert _words(epsilon["b"]) == f"8.00 PASS (1 of 2 answers an error: {HTTP_500})"
    texts = re.findall(r'<pre class="answer">([^<]*)</pre>', epsilon["detail"])
    assert texts[1] == f"error: {HTTP_500}" and texts[3] == "Paris (epsilon)."


def test_unknown_runs_and_bad_noise_are_refused(runs: tuple[str, str, str, str]) -> None:
    db, a, b, _ = runs
    missing = _get(db, "/diff", a=a, b="nope-nope")
    assert missing.status_code == 404 and "no run with id 'nope-nope'" in missing.text
    bad = _get(db, "/diff", a=a, b=b, noise="-1")
    assert bad.status_code == 422 and "noise: expected a number" in bad.text


def test_the_picker_offers_the_first_runs_suite_unless_asked(
    runs: tuple[str, str, str, str],
) -> None:
    db, a, b, other = runs

    def options(page: str, name: str) -> list[str]:
        found = re.search(rf'<select name="{name}">(.*?)</select>', page, re.DOTALL)
        assert found is not None
        return re.findall(r'<option value="([^"]+)"', found.group(1))

    def selected(page: str, name: str) -> str:
        found = re.search(
            rf'<select name="{name}">.*?<option value="([^"]+)" selected>', page, re.DOTALL
        )
        assert found is not None
        return found.group(1)

    empty = _get(db, "/diff").text  # the newest run (B) and the run of its suite before it
    assert sorted(options(empty, "a")) == sorted([a, b]) and other not in options(empty, "b")
    assert (selected(empty, "a"), selected(empty, "b")) == (a, b)
    assert "show runs of every suite (1 more)" in empty
    from_run = _get(db, "/diff", b=b).text  # the run page's "diff" link
    assert selected(from_run, "a") == a
    every = _get(db, "/diff", a=a, all="1").text
    assert other in options(every, "a") and 'name="all" value="1"' in every
    runs_page = _get(db, "/runs").text  # the runs list's picker: B newest, A its suite's
    assert f'<option value="{a}" selected>' in runs_page
    assert f'<option value="{other}" selected>' not in runs_page


def test_runs_of_two_suites_are_flagged_and_the_status_filter_pages(
    runs: tuple[str, str, str, str],
) -> None:
    db, a, b, other = runs
    page = _get(db, "/diff", a=other, b=b).text
    assert 'id="other-suite"' in page
    only = _get(db, "/diff", a=a, b=b, status="new_fail").text
    assert sorted(_tuples(only)) == ["alpha", "gamma"] and "tuples 1-2 of 2" in only
