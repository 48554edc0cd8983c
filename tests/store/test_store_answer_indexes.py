"""The answers' indexes (migration 0012): a candidate's answer writes no random key into any
index but the run's own unique key; the reference answers' call keys are still found by
index; deleting a run still drops exactly the input rows no other answer names. SQLite and
PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import Engine
from store_factories import response

from qualspec.store import Store, downgrade, upgrade


def _answer_indexes(url: str) -> dict[str, tuple[tuple[str, ...], str]]:
    """Each index of ``responses``: its columns, and its predicate ('' for none)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            found = inspect(conn).get_indexes("responses")
    finally:
        engine.dispose()
    out = {}
    for index in found:
        options = index.get("dialect_options", {})
        where = options.get("sqlite_where", options.get("postgresql_where", ""))
        out[str(index["name"])] = (tuple(index["column_names"]), str(where))
    return out


def _answers(n: int, prefix: str, **overrides: Any) -> list[Any]:
    return [
        response(
            f"{prefix}{i}",
            call_key=f"ck-{prefix}{i}",
            input_id=str(i),
            input_values={"id": i, "text": f"row {i}"},
            **overrides,
        )
        for i in range(n)
    ]


def test_a_candidates_answer_enters_no_index_of_a_random_key(db_url: str, store: Store) -> None:
    """Before 0012 every answer wrote its call key and its input row's hash into two
    indexes of the whole table: at a million answers, most of a run's time in the store."""
    indexes = _answer_indexes(db_url)
    run_only = {"ix_responses_run", "uq_responses_run_key_current"}
    assert set(indexes) == run_only | {"ix_responses_call_key"}
    columns, where = indexes["ix_responses_call_key"]
    assert columns == ("call_key",) and "kind" in where and "reference" in where
    assert indexes["ix_responses_run"] == (("run_id",), "")


def test_a_reference_is_looked_up_by_its_call_key_through_the_index(
    db_url: str, store: Store
) -> None:
    """Every query that looks answers up by call key names the partial index's predicate, so
    the database uses the index (SQLite: the plan; PostgreSQL: with sequential scans off)."""
    run_id = store.create_run("s", "h", {})
    store.record_responses(run_id, _answers(50, "c"))
    store.record_responses(run_id, _answers(3, "r", kind="reference", candidate="reference"))
    store.set_reference_status("ck-r1", "validated", None, "alice")
    seen: list[tuple[str, Any]] = []

    def note(conn: Any, cursor: Any, sql: str, params: Any, context: Any, many: bool) -> None:
        seen.append((sql, params))

    event.listen(Engine, "before_cursor_execute", note)
    try:
        assert store.find_reference("ck-r1") == "ck-r1"
        assert {a.call_key for a in store.reference_answers()} == {"ck-r0", "ck-r1", "ck-r2"}
        assert store.reference_review("ck-r1") is not None
    finally:
        event.remove(Engine, "before_cursor_execute", note)
    lookups = [
        (sql, params)
        for sql, params in seen
        if "FROM responses" in sql and "call_key" in sql.split("FROM responses", 1)[1]
    ]
    assert lookups, "no query looked answers up by call key"
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            for sql, params in lookups:
                if engine.dialect.name == "sqlite":
                    plan = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, params).fetchall()
                else:
                    conn.exec_driver_sql("SET enable_seqscan = off")
                    plan = conn.exec_driver_sql("EXPLAIN " + sql, params).fetchall()
                shown = " ".join(str(step) for step in plan)
                assert "ix_responses_call_key" in shown, (sql, shown)
    finally:
        engine.dispose()


def test_deleting_a_run_keeps_the_rows_other_runs_name_among_many(
    db_url: str, store: Store
) -> None:
    """More rows than one statement deletes (500): the rows a cached rerun still names stay,
    the deleted run's own go, and a third run's rows are untouched."""
    first, rerun, other = (store.create_run("s", "h", {}) for _ in range(3))
    store.record_responses(first, _answers(1200, "a"))
    store.record_responses(rerun, _answers(700, "a", cached=True))  # rows 0-699 again
    store.record_responses(other, [response("z", input_id="z", input_values={"id": "z"})])
    store.delete_run(first)
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            left = conn.execute(text("SELECT count(*) FROM input_rows")).scalar()
    finally:
        engine.dispose()
    assert left == 701
    kept = store.load_run(rerun).responses
    assert len(kept) == 700 and all(r.input_values is not None for r in kept)
    assert store.load_run(other).responses[0].input_values == {"id": "z"}
    store.delete_run(rerun)
    store.delete_run(other)
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM input_rows")).scalar() == 0
    finally:
        engine.dispose()


def test_the_migration_to_0012_and_back_keeps_every_answer(db_url: str) -> None:
    with Store.open(db_url) as store:
        run_id = store.create_run("s", "h", {})
        store.record_responses(run_id, _answers(20, "c"))
    downgrade(db_url, "0011")
    old = _answer_indexes(db_url)
    assert old["ix_responses_input_hash"] == (("input_hash",), "")
    assert old["ix_responses_call_key"] == (("call_key",), "")
    upgrade(db_url)
    assert "ix_responses_input_hash" not in _answer_indexes(db_url)
    with Store.open(db_url) as store:
        got = store.load_run(run_id).responses
        assert len(got) == 20 and all(r.input_values is not None for r in got)
