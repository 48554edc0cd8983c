"""The SQLite run path (stdlib ``sqlite3``, no SQLAlchemy): its SQL is generated from the
Core schema and cannot drift, and it writes and reads exactly what the SQLAlchemy path does.

Both paths write the same records into two databases: every table's rows are the same
bytes; and each database read back through either path gives the same objects.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_factories import judgment, response

from qualspec.store import CacheEntry, RunRecord, Store
from qualspec.store._lite_gen import TARGET, render

_SA = "QUALSPEC_SQLITE_DRIVER"
_NOW_COLUMNS = {  # set from the clock when written: compared by form, not by value
    "runs": ("id", "started_at", "finished_at", "heartbeat_at", "owner_pid", "owner_host"),
    "input_rows": ("created_at",),
    "prompt_versions": ("created_at",),
}
_STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}"


def test_the_generated_sql_is_up_to_date() -> None:
    assert TARGET.read_text(encoding="utf-8") == render(), (
        "regenerate it: python -m qualspec.store._lite_gen"
    )


def _open(url: str, *, lite: bool, monkeypatch: pytest.MonkeyPatch) -> Store:
    with monkeypatch.context() as m:
        if lite:
            m.delenv(_SA, raising=False)
        else:
            m.setenv(_SA, "sqlalchemy")
        store = Store.open(url)
    assert (type(store) is Store) is not lite
    return store


def _write(store: Store, text: str, meta: Any) -> str:
    """The same records, each kind and odd value the run path writes."""
    run_id = store.create_run("suite " + text, "hash", {"argv": ["run"], "odd": meta})
    store.update_run_metadata(run_id, {"patch": text, "api_key": "sk-secret"})
    store.acquire_run(run_id)
    store.heartbeat(run_id)
    pv = store.prompt_version("p", text)
    rows = {"q": text, "n": 3, "f": 1.5, "none": None}
    with store.together():
        store.record_responses(
            run_id,
            [
                response("k1", text=text, prompt_versions={"p": pv}, input_values=rows),
                response("k2", text=None, error=text or "boom", cached=True, temperature=None),
                response("k3", served_by="http://replica", queue_s=0.125, cost_usd=None),
                response("k4", created_at=datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC), kind="ref"),
            ],
        )
        store.record_judgments(
            run_id,
            [
                judgment("k1", text or "c", prompt_version=pv, reasoning=text),
                judgment("k1", "grp", evaluator="panel", subject=("k1", "k3"), scores={"a": 1}),
                judgment("k3", "x", score=None, passed=None, unscored_reason="why", details={}),
                judgment("k3", "y", passed=False, score=2, threshold=None, error="e"),
            ],
        )
        store.cache_put_many(
            [
                CacheEntry(
                    key="c1", kind="candidate", provider="p", model="m", text=text,
                    finish_reason="stop", input_tokens=1, output_tokens=2,
                    effective_temperature=0.0, structured={"s": [text]},
                    created_at=datetime(2026, 1, 1, tzinfo=UTC),
                    expires_at=datetime(2030, 1, 1, tzinfo=UTC),
                ),
            ]
        )  # fmt: skip
    store.supersede(run_id, ["k4"], [("criteria", "k3", "x")])
    store.record_responses(run_id, [response("k4", text="again")])
    store.release_run(run_id)
    store.finish_run(run_id, "completed")
    return run_id


def _tables(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(path)
    try:
        out: dict[str, list[tuple[Any, ...]]] = {}
        names = conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        for (name,) in names.fetchall():
            cursor = conn.execute(f'SELECT * FROM "{name}" ORDER BY 1')
            columns = [c[0] for c in cursor.description]
            masked = [columns.index(c) for c in _NOW_COLUMNS.get(name, ())]
            rows = []
            for row in cursor.fetchall():
                values = list(row)
                for i in masked:
                    values[i] = "<now>" if values[i] is not None else None
                rows.append(tuple(values))
            out[name] = rows
        schema = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name")
        out["<schema>"] = schema.fetchall()
        return out
    finally:
        conn.close()


def _read(store: Store, run_id: str) -> tuple[Any, ...]:
    record = store.load_run(run_id, include_superseded=True)
    return (
        _no_clock(record),
        store.cache_get_many(["c1", "absent"]),
        store.get_prompt_by_id(1).text,
        store.run_counts(run_id),
        store.done_responses(run_id, ["k1", "k2", "k3", "k4"]),
        store.done_evaluations(run_id, ["k1", "k3"]),
        store.judgments_of(run_id, ["k1", "k3"]),
        store.present_keys(run_id, ["k1", "k9"]),
        list(store.response_pages(run_id, size=2)),  # a large run's results file
        store.group_judgments(run_id),
        store.latest_unfinished_run("nope"),
    )


def _no_clock(record: RunRecord) -> tuple[Any, ...]:
    s = record.summary
    return (s.suite_name, s.status, s.metadata, s.n_responses, s.n_errors, s.cost_usd, record)


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    yield tmp_path / "lite.db", tmp_path / "sa.db"


def _same_through_both(
    paths: tuple[Path, Path], text: str, meta: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = []
    for path, lite in zip(paths, (True, False), strict=True):
        with _open(f"sqlite:///{path}", lite=lite, monkeypatch=monkeypatch) as store:
            ids.append(_write(store, text, meta))
    lite_rows, sa_rows = (_tables(p) for p in paths)
    # the run ids differ (random); everything else is the same bytes
    lite_rows = _renamed(lite_rows, ids[0])
    assert lite_rows == _renamed(sa_rows, ids[1])
    for path, run_id in zip(paths, ids, strict=True):
        reads = []
        for lite in (True, False):
            with _open(f"sqlite:///{path}", lite=lite, monkeypatch=monkeypatch) as store:
                reads.append(_read(store, run_id))
        assert reads[0] == reads[1]


def _renamed(tables: dict[str, list[tuple[Any, ...]]], run_id: str) -> dict[str, Any]:
    return {
        name: [tuple("<run>" if v == run_id else v for v in row) for row in rows]
        for name, rows in tables.items()
    }


def test_both_paths_write_the_same_rows_and_read_the_same_records(
    two: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _same_through_both(two, "héllo \u2603 'quoted' \"double\"", {"n": [1, 2.5, None]}, monkeypatch)
    stamps = sqlite3.connect(two[0]).execute("SELECT started_at, finished_at FROM runs").fetchone()
    assert all(re.fullmatch(_STAMP, s) for s in stamps)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(st.characters(blacklist_categories=["Cs"]), max_size=40),
    meta=st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
        max_leaves=6,
    ),
)
def test_odd_text_and_values_are_the_same_through_both_paths(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, text: str, meta: Any
) -> None:
    folder = tmp_path_factory.mktemp("odd")
    _same_through_both((folder / "lite.db", folder / "sa.db"), text, meta, monkeypatch)


def test_a_store_at_an_older_revision_is_migrated_by_the_sqlalchemy_path(tmp_path: Path) -> None:
    from qualspec.store import downgrade, revisions

    url = f"sqlite:///{tmp_path / 'old.db'}"
    Store.open(url).close()
    downgrade(url, revisions()[-2])
    with Store.open(url) as store:  # the lite check sees an older revision: SQLAlchemy upgrades
        assert store.schema_revision == revisions()[-1]
        run_id = store.create_run("s", "h", {})
        store.record_responses(run_id, [response("k")])
        assert [r.key for r in store.load_run(run_id).responses] == ["k"]


def test_a_fresh_store_and_a_cached_run_never_import_sqlalchemy(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from datetime import UTC, datetime\n"
        "from qualspec.store import Store, CacheEntry\n"
        f"url = 'sqlite:///{tmp_path / 'q.db'}'\n"
        "for _ in range(2):\n"
        "    with Store.open(url) as s:\n"
        "        r = s.create_run('s', 'h', {}); s.acquire_run(r)\n"
        "        s.cache_put_many([CacheEntry(key='c', kind='k', provider='p', model='m',\n"
        "            text='t', created_at=datetime.now(UTC))])\n"
        "        assert s.cache_get_many(['c'])\n"
        "        s.release_run(r); s.finish_run(r, 'completed'); s.load_run(r)\n"
        "        list(s.response_pages(r))  # a large run's results file\n"
        "assert 'sqlalchemy' not in sys.modules, 'sqlalchemy imported'\n"
        "assert 'alembic' not in sys.modules, 'alembic imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_the_cache_ttl_is_judged_the_same_on_both_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    old = datetime.now(UTC) - timedelta(hours=2)
    entry = CacheEntry(key="c", kind="k", provider="p", model="m", text="t", created_at=old)
    found = []
    for lite in (True, False):
        with _open(url, lite=lite, monkeypatch=monkeypatch) as store:
            store.cache_put_many([entry])
            found.append(
                (
                    set(store.cache_get_many(["c"], ttl={"k": 3600})),
                    set(store.cache_get_many(["c"])),
                )
            )
    assert found == [(set(), {"c"})] * 2


def test_answers_read_with_the_same_prompt_versions_get_a_dict_each(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'v.db'}") as store:
        run_id = store.create_run("s", "h", {})
        same = {"scenario_prompt:1": 4, "system_prompt:x": 2}
        store.record_responses(
            run_id,
            [response(f"k{i}", prompt_versions=dict(same)) for i in range(3)]
            + [response("n", prompt_versions={"nested": {"a": 1}})],  # type: ignore[dict-item]
        )
        pages = [r for page in store.response_pages(run_id) for r in page]
        loaded = store.load_run(run_id).responses
    for records in (pages, loaded):
        flat = [r for r in records if r.key != "n"]
        assert [r.prompt_versions for r in flat] == [same] * 3
        flat[0].prompt_versions["changed"] = 1  # each its own dict
        assert flat[1].prompt_versions == same
        assert next(r for r in records if r.key == "n").prompt_versions == {"nested": {"a": 1}}
