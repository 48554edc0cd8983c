"""People's labels (migration 0011): stored all at once, idempotently, read back by answer;
dropped with their run; the table comes and goes with the migration."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect
from store_factories import response

from qualspec.errors import StoreError
from qualspec.store import LabelCounts, LabelRecord, Store, downgrade, upgrade

_SOURCE = {"source_name": "human.csv", "source_sha256": "a" * 64}


def _labels() -> list[LabelRecord]:
    return [
        LabelRecord("k1", "polite", score=8.0, passed=True, labeller="ann"),
        LabelRecord("k1", "polite", score=6.0, passed=False, labeller="bob", notes="curt"),
        LabelRecord("k2", "polite", passed=False),
        LabelRecord("k2", "accurate", score=3.0),
    ]


def test_labels_are_stored_with_who_and_when_and_read_back(db_url: str) -> None:
    with Store.open(db_url) as store:
        run_id = store.create_run("suite", "h", {})
        store.record_responses(run_id, [response("k1"), response("k2")])
        counts = store.record_labels(run_id, _labels(), who="carol", **_SOURCE)
        assert counts == LabelCounts(added=4, changed=0, unchanged=0)
        got = store.labels(run_id)
        assert [(g.response_key, g.criterion, g.labeller, g.score, g.passed) for g in got] == [
            ("k1", "polite", "ann", 8.0, True),
            ("k1", "polite", "bob", 6.0, False),
            ("k2", "accurate", "", 3.0, None),
            ("k2", "polite", "", None, False),
        ]
        assert {(g.imported_by, g.source_name, g.source_sha256) for g in got} == {
            ("carol", "human.csv", "a" * 64)
        }
        assert all(g.imported_at is not None and g.imported_at.tzinfo for g in got)
        assert [g.notes for g in got] == [None, "curt", None, None]
        assert [g.response_key for g in store.labels(run_id, ["k2"])] == ["k2", "k2"]


def test_the_same_labels_again_change_nothing_and_a_new_value_is_updated(db_url: str) -> None:
    with Store.open(db_url) as store:
        run_id = store.create_run("suite", "h", {})
        store.record_responses(run_id, [response("k1"), response("k2")])
        store.record_labels(run_id, _labels(), who="carol", **_SOURCE)
        before = store.labels(run_id)
        again = store.record_labels(run_id, _labels(), who="dave", **_SOURCE)
        assert again == LabelCounts(added=0, changed=0, unchanged=4)
        assert store.labels(run_id) == before  # not even who imported them, or when
        edited = _labels()
        edited[3] = LabelRecord("k2", "accurate", score=4.0)
        counts = store.record_labels(
            run_id, edited, who="dave", source_name="v2.csv", source_sha256="b" * 64
        )
        assert counts == LabelCounts(added=0, changed=1, unchanged=3)
        after = {(g.response_key, g.criterion): g for g in store.labels(run_id) if not g.labeller}
        assert after["k2", "accurate"].score == 4.0
        assert after["k2", "accurate"].imported_by == "dave"
        assert after["k2", "accurate"].source_name == "v2.csv"
        assert after["k2", "polite"].imported_by == "carol"


def test_a_failed_write_stores_none_of_the_labels(db_url: str) -> None:
    with Store.open(db_url) as store:
        run_id = store.create_run("suite", "h", {})
        store.record_responses(run_id, [response("k1"), response("k2")])
        twice = [*_labels(), LabelRecord("k2", "accurate", score=4.0)]  # one key twice
        with pytest.raises(StoreError):
            store.record_labels(run_id, twice, who="carol", **_SOURCE)
        assert store.labels(run_id) == []


def test_labels_go_with_their_run(db_url: str) -> None:
    with Store.open(db_url) as store:
        run_id = store.create_run("suite", "h", {})
        store.record_responses(run_id, [response("k1"), response("k2")])
        store.record_labels(run_id, _labels(), who="carol", **_SOURCE)
        store.delete_run(run_id)
        assert store.labels(run_id) == []


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return set(inspect(conn).get_table_names())
    finally:
        engine.dispose()


def test_migration_0011_adds_the_table_and_its_downgrade_drops_it(db_url: str) -> None:
    upgrade(db_url, "0010")
    assert "labels" not in _tables(db_url)
    with Store.open(db_url) as store:  # upgraded to head on open
        run_id = store.create_run("suite", "h", {})
        store.record_responses(run_id, [response("k1"), response("k2")])
        store.record_labels(run_id, _labels(), who="carol", **_SOURCE)
    downgrade(db_url, "0010")
    assert "labels" not in _tables(db_url)
    upgrade(db_url)
    with Store.open(db_url) as store:
        assert store.labels(run_id) == []  # dropped with the table
        assert [r.key for r in store.load_run(run_id).responses] == ["k1", "k2"]
        store.record_labels(run_id, _labels(), who="carol", **_SOURCE)
        assert len(store.labels(run_id)) == 4
