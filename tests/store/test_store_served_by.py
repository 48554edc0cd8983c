"""``responses.served_by`` (migration 0010): the replica that answered, kept and read back;
rows written before the column exist read back without one."""

from __future__ import annotations

from store_factories import response

from qualspec.store import Store, downgrade, upgrade


def test_served_by_is_recorded_and_read_back(db_url: str) -> None:
    with Store.open(db_url) as store:
        run_id = store.create_run("suite", "h", {})
        store.record_responses(
            run_id,
            [response("k1", served_by="http://10.0.0.5:8080/v1"), response("k2")],
        )
        loaded = store.load_run(run_id)
    assert [(r.key, r.served_by) for r in loaded.responses] == [
        ("k1", "http://10.0.0.5:8080/v1"),
        ("k2", None),
    ]


def test_rows_from_before_0010_read_back_without_served_by(db_url: str) -> None:
    with Store.open(db_url) as store:
        run_id = store.create_run("suite", "h", {})
        store.record_responses(run_id, [response("k1", served_by="http://a/v1")])
    downgrade(db_url, "0009")  # the schema before the column: the value is gone
    upgrade(db_url)
    with Store.open(db_url) as store:
        (row,) = store.load_run(run_id).responses
    assert row.key == "k1" and row.text == "answer k1" and row.served_by is None
