"""A run's page at size (issue 19, item 1): the run's snapshot is built once, kept in the
store (cache kind ``view``, key ``view:RUN_ID``, beside the run's summary) and read back by
a fresh server, rebuilt
when the run changes, never kept for a run in progress; and a run of a few thousand
answers gives exactly the answers each filter, search and sort asks for, page by page,
reading only the page's answers (``Store.load_run_part``)."""

from __future__ import annotations

import asyncio
import dataclasses
import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers_explore import CHECK, seed_explore_run

from qualspec.store import ResponseRecord, Store
from qualspec.web import create_app, keep_run_view


def _get(db: str, *paths: str | tuple[str, dict[str, str]]) -> list[httpx.Response]:
    """GETs from one fresh app (its memory empty: what it shows comes from the store)."""

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


def _count(page: str) -> str:
    found = re.search(r'<p class="count" id="count">(.*?)</p>', page, re.DOTALL)
    assert found is not None
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", found.group(1))).split())


def _rows(page: str) -> list[dict[str, str]]:
    out = []
    for m in re.finditer(r'<tr class="answer" data-verdict="(\w+)">(.*?)</tr>', page, re.DOTALL):
        cells = [
            html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", m.group(2), re.DOTALL)
        ]
        keys = ("candidate", "where", "t", "run", "score", "verdict", "why")
        out.append(dict(zip(keys, cells, strict=True)))
    return out


def _kept(db: str, run_id: str) -> Any:
    with Store.open(db) as store:
        found = store.cache_get_many([f"view:{run_id}"]).get(f"view:{run_id}")
        entries = store.cache_stats()["kinds"].get("view", {}).get("entries", 0)
    return found, entries


def test_the_snapshot_is_built_once_kept_and_read_by_a_fresh_server(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'kept.db'}"
    run_id = seed_explore_run(db)
    assert _kept(db, run_id) == (None, 0)
    (first,) = _get(db, f"/runs/{run_id}")
    assert first.status_code == 200
    entry, entries = _kept(db, run_id)
    assert entries == 2 and entry.kind == "view"  # the snapshot, and the run's summary
    # a mark in the kept snapshot: a fresh server shows it, so it read it, not the run
    marked = dict(entry.structured)
    marked["page"] = {**marked["page"], "facts": [["answers", "MARKED-123", ""]]}
    with Store.open(db) as store:
        store.cache_put_many([dataclasses.replace(entry, structured=marked)])
    (second,) = _get(db, f"/runs/{run_id}")
    assert "MARKED-123" in second.text
    assert _count(second.text).startswith("showing 1-16 of 16 matching")
    # the run changes (an answer added): the snapshot is stale, built again and replaced
    with Store.open(db) as store:
        store.record_responses(
            run_id,
            [
                ResponseRecord(
                    key="late",
                    candidate="gamma",
                    role=None,
                    scenario="capital",
                    input_id=None,
                    temperature=0.0,
                    effective_temperature=0.0,
                    run_index=0,
                    provider="fake",
                    model="m",
                    text="Paris, late.",
                )
            ],
        )
    (third,) = _get(db, f"/runs/{run_id}")
    assert "MARKED-123" not in third.text
    assert _count(third.text).startswith("showing 1-17 of 17 matching")
    assert '<option value="gamma">' in third.text
    entry, entries = _kept(db, run_id)
    assert entries == 2 and entry.structured["key"] != marked["key"]  # replaced


def test_a_run_in_progress_is_never_kept(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'running.db'}"
    with Store.open(db) as store:
        run_id = store.create_run("Running", "h", {})
        store.record_responses(
            run_id,
            [
                ResponseRecord(
                    key=f"k{i}",
                    candidate="a",
                    role=None,
                    scenario="s",
                    input_id=None,
                    temperature=0.0,
                    effective_temperature=0.0,
                    run_index=i,
                    provider="fake",
                    model="m",
                    text=f"answer {i}",
                )
                for i in range(3)
            ],
        )
        assert keep_run_view(store, run_id) is False
    (page,) = _get(db, f"/runs/{run_id}")
    assert _count(page.text).startswith("showing 1-3 of 3 matching")
    assert _kept(db, run_id) == (None, 0)
    with Store.open(db) as store:
        store.finish_run(run_id, "finished")
        assert keep_run_view(store, run_id) is True
    assert _kept(db, run_id)[1] == 2


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(database URL, run id) of a run of 2,416 answers (half of them failing: every
    answer at temperature 1), its snapshot kept as ``qualspec run`` keeps it."""
    work = tmp_path_factory.mktemp("big")
    db = f"sqlite:///{work / 'big.db'}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("QUALSPEC_HOME", str(work / "home"))
        run_id = seed_explore_run(db, inputs=150, suite="Big")
        with Store.open(db) as store:
            assert keep_run_view(store, run_id) is True
        yield db, run_id


def _all(db: str, run_id: str, **params: str) -> tuple[str, list[dict[str, str]]]:
    """Every page of a view at 500 answers a page: (the first page's count, every row)."""
    (first,) = _get(db, (f"/runs/{run_id}", {**params, "per": "500"}))
    count = _count(first.text)
    total = int(re.search(r"of (\d+) matching", count).group(1)) if "of" in count else 0
    rows = _rows(first.text)
    pages = [(f"/runs/{run_id}", {**params, "per": "500", "page": str(n)}) for n in range(2, 6)]
    for page in _get(db, *pages[: max(0, (total - 1) // 500)]):
        rows += _rows(page.text)
    return count, rows


def test_failed_only_at_size_is_every_failing_answer_once(big: tuple[str, str]) -> None:
    count, rows = _all(*big, failed="1")
    assert count.startswith("showing 1-500 of 1208 matching (2416 in the run) · FAIL 1208")
    assert len(rows) == 1208
    assert {r["verdict"] for r in rows} == {"FAIL"} and {r["t"] for r in rows} == {"1"}
    assert len({(r["candidate"], r["where"], r["run"]) for r in rows}) == 1208
    assert all(r["why"] for r in rows)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"candidate": "beta", "failed": "1"}, 604),  # beta fails its check at T 1
        ({"check": CHECK, "failed": "1"}, 604),
        ({"criterion": "clarity", "failed": "1"}, 604),  # alpha at T 1
        ({"criterion": "clarity", "failed": "1", "candidate": "beta"}, 0),
        ({"evaluator": "expect"}, 2416),
        ({"scenario": "rows", "input": "row00007"}, 16),
        ({"input": "-"}, 16),  # the scenario without input rows
        ({"temperature": "0"}, 1208),
        ({"q": "LOVELY city"}, 604),  # in the answers, any case, every word
        ({"q": '"clarity rated 4"'}, 302),  # in the judge's reasoning, as a phrase
        ({"q": "describe"}, 2400),  # in the prompt template of the input rows
        ({"q": "lovely", "role": "expert", "temperature": "1"}, 302),
        ({"q": "100%"}, 0),
    ],
)
def test_filters_and_search_at_size(
    big: tuple[str, str], params: dict[str, str], expected: int
) -> None:
    count, rows = _all(*big, **params)
    assert len(rows) == expected, count
    if expected:
        shown = min(500, expected)
        assert count.startswith(f"showing 1-{shown} of {expected} matching"), count
    for name in ("candidate", "t"):
        wanted = params.get({"t": "temperature"}.get(name, name))
        if wanted and expected:
            assert {r[name] for r in rows} == {wanted}


def test_pages_and_sorting_at_size(big: tuple[str, str]) -> None:
    db, run_id = big
    low, page_2, past = _get(
        db,
        (f"/runs/{run_id}", {"failed": "1", "sort": "score", "per": "500"}),
        (f"/runs/{run_id}", {"failed": "1", "sort": "score", "per": "500", "page": "2"}),
        (f"/runs/{run_id}", {"failed": "1", "per": "500", "page": "99"}),
    )
    scores = [float(r["score"].split("/")[0]) for r in _rows(low.text) + _rows(page_2.text)]
    assert scores == sorted(scores) and scores[0] == 6.5 and scores[-1] == 9.0
    assert _count(page_2.text).startswith("showing 501-1000 of 1208 matching")
    assert _count(past.text).startswith("showing 1001-1208 of 1208 matching")
    (slow,) = _get(db, (f"/runs/{run_id}", {"sort": "latency", "per": "10"}))
    assert {r["run"] for r in _rows(slow.text)} == {"2"}  # run 2 is the slower one
    # the answer's details are read for the page's answers: what was sent, every verdict
    (one,) = _get(db, (f"/runs/{run_id}", {"input": "row00149", "candidate": "alpha", "per": "1"}))
    shown = html.unescape(one.text)
    assert "You are a careful geography tutor." in shown
    assert "clarity rated" in shown and "judged by the book" in shown


def test_a_finished_runs_summary_is_kept_under_its_stamp(tmp_path: Path) -> None:
    """A view of a large finished run does not sum its rows again: its summary is kept."""
    db = f"sqlite:///{tmp_path / 'summary.db'}"
    run_id = seed_explore_run(db)
    _get(db, f"/runs/{run_id}")
    with Store.open(db) as store:
        entry = store.cache_get_many([f"view-summary:{run_id}"])[f"view-summary:{run_id}"]
        kept = dict(entry.structured)
        kept["summary"] = {**kept["summary"], "suite_name": "MARKED-SUITE"}
        store.cache_put_many([dataclasses.replace(entry, structured=kept)])
    (page,) = _get(db, f"/runs/{run_id}")
    assert "MARKED-SUITE" in page.text
    with Store.open(db) as store:  # the run changes: its summary is summed again
        store.update_run_metadata(run_id, {"note": "changed"})
    (page,) = _get(db, f"/runs/{run_id}")
    assert "MARKED-SUITE" not in page.text and "Capitals" in page.text


def test_the_snapshot_is_built_from_parts_never_from_the_whole_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19: ``keep_run_view`` (the end of ``qualspec run``) and the server's first
    view build the snapshot from the store in parts, with the whole run's verdicts."""
    from qualspec.analysis import run_verdicts

    db = f"sqlite:///{tmp_path / 'parts.db'}"
    run_id = seed_explore_run(db, inputs=30)
    with Store.open(db) as store:
        record = store.load_run(run_id)
    verdicts = run_verdicts(record)
    answers = sum(1 for r in record.responses if r.kind == "candidate")

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the whole run was loaded")

    monkeypatch.setattr(Store, "load_run", refused)
    (built,) = _get(db, f"/runs/{run_id}")  # built by the server's first view
    assert _count(built.text).startswith(f"showing 1-50 of {answers} matching")
    entry, _ = _kept(db, run_id)
    page = entry.structured["page"]
    passed, failed, none = verdicts.count("cells")
    assert (page["stats"]["passed"], page["stats"]["with_verdict"]) == (passed, passed + failed)
    rows = page["matrix"]["rows"]
    assert [r["label"] for r in rows] == [row.label for row in verdicts.rows.values()]
    names = ("scenario", "input", "role", "candidate")
    assert [tuple(r["where"][n] for n in names) for r in rows] == [
        (s, i if i is not None else "-", r if r is not None else "-", c)
        for s, i, r, c in verdicts.rows
    ]
    assert page["matrix"]["left_out"] == 0
    with Store.open(db) as store:  # kept again at the end of a run: the same snapshot
        store.cache_clear(kind="view")
        assert keep_run_view(store, run_id)
    again, _ = _kept(db, run_id)
    assert again.structured == entry.structured


def test_the_suite_order_of_more_input_rows_than_one_sort_chunk(tmp_path: Path) -> None:
    """The snapshot ranks input ids a chunk of 8,192 at a time, per scenario, and merges
    (so that a large run's ids never all hold a sort key at once): its rows come in the
    order of the run's verdicts (ids the run's plan did not list: natural order, ``r9``
    before ``r10``) at 9,000 input rows over two scenarios, recorded shuffled."""
    import random

    from qualspec.analysis import run_verdicts

    db = f"sqlite:///{tmp_path / 'order.db'}"
    cells = [(s, f"r{i}" if i % 7 else f"r{i}-b") for s in ("beta", "alpha") for i in range(4500)]
    random.Random(7).shuffle(cells)
    with Store.open(db) as store:
        run_id = store.create_run("order", "h", {"dimensions": {"scenarios": ["beta", "alpha"]}})
        records = [
            ResponseRecord(
                key=f"k{n}",
                candidate="c",
                role=None,
                scenario=scenario,
                input_id=input_id,
                temperature=None,
                effective_temperature=None,
                run_index=0,
                provider="p",
                model="m",
                text="answer",
            )
            for n, (scenario, input_id) in enumerate(cells)
        ]
        for start in range(0, len(records), 1000):
            store.record_responses(run_id, records[start : start + 1000])
        store.finish_run(run_id, "finished")
        expected = [(s, i) for s, i, _, _ in run_verdicts(store.load_run(run_id)).rows]
        assert keep_run_view(store, run_id)
    entry, _ = _kept(db, run_id)
    rows = entry.structured["page"]["matrix"]["rows"]
    assert [(r["where"]["scenario"], r["where"]["input"]) for r in rows] == expected
    assert expected[:3] == [("beta", "r0-b"), ("beta", "r1"), ("beta", "r2")]


def test_the_matrix_rows_query_strings_are_urlencodes(tmp_path: Path) -> None:
    """Each matrix row's query string (made without ``urlencode``'s cost per value) is
    the text ``urlencode`` writes, whatever the names hold."""
    from urllib.parse import urlencode

    db = f"sqlite:///{tmp_path / 'q.db'}"
    names = [("plain", "r1", "c"), ("a b/c?", "é&=+%", "x~y.z-_"), ("中文", "", "tab\there")]
    with Store.open(db) as store:
        run_id = store.create_run("q", "h", {})
        store.record_responses(
            run_id,
            [
                ResponseRecord(
                    key=f"k{n}",
                    candidate=candidate,
                    role=None,
                    scenario=scenario,
                    input_id=input_id,
                    temperature=None,
                    effective_temperature=None,
                    run_index=0,
                    provider="p",
                    model="m",
                    text="answer",
                )
                for n, (scenario, input_id, candidate) in enumerate(names)
            ],
        )
        store.finish_run(run_id, "finished")
        assert keep_run_view(store, run_id)
    entry, _ = _kept(db, run_id)
    rows = entry.structured["page"]["matrix"]["rows"]
    assert len(rows) == len(names)
    for row in rows:  # (kept as JSON, its "where" comes back with its keys sorted)
        where = {k: row["where"][k] for k in ("scenario", "input", "role", "candidate")}
        assert row["q"] == urlencode(where)
    assert {row["where"]["scenario"] for row in rows} == {s for s, _, _ in names}
