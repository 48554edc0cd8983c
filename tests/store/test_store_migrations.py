"""Migrations: from an empty database and from every earlier revision, on both backends."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import create_engine, text
from store_factories import judgment, response

from qualspec.errors import SchemaVersionError
from qualspec.store import CacheEntry, Store, downgrade, head_revision, revisions, upgrade
from qualspec.store._schema import (
    UTCDateTime,
    cache_entries,
    metadata,
    prompt_versions,
    responses,
    runs,
)

T0 = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)


def _schema_diffs(url: str) -> list[Any]:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            return list(compare_metadata(context, metadata))
    finally:
        engine.dispose()


def _current(url: str) -> str | None:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    finally:
        engine.dispose()


def _insert_sample(url: str, revision: str) -> None:
    """Rows using only the columns of the first revision (and those a revision requires)."""
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            runs.insert().values(
                id="20260101-000000-abcdef",
                suite_name="old-suite",
                suite_hash="h0",
                status="interrupted",
                started_at=T0,
                metadata={"qualspec_version": "0.0.1"},
            )
        )
        conn.execute(
            responses.insert().values(
                run_id="20260101-000000-abcdef",
                key="k0",
                candidate="c",
                role=None,
                scenario="s",
                input_id=None,
                temperature=0.0,
                effective_temperature=0.0,
                run_index=0,
                provider="openai",
                model="m",
                text="kept across migrations",
                attempts=1,
                cached=False,
                prompt_versions={},
                created_at=T0,
            )
        )
        conn.execute(
            prompt_versions.insert().values(
                name="system_prompt", version=1, content_hash="0" * 64, text="old", created_at=T0
            )
        )
        conn.execute(
            cache_entries.insert().values(
                key="ck", kind="candidate", provider="p", model="m", text="t", created_at=T0
            )
        )
        # the judgments table as revision 0001 made it (head has more columns); from 0004
        # on the store writes the criterion's hash, which has no default
        required = {"criterion_hash": _sha256("polite")} if revision >= "0004" else {}
        old_judgments = sa.table(
            "judgments",
            *(sa.column(name) for name in (*_OLD_JUDGMENT_COLUMNS, *required)),
            sa.column("created_at", UTCDateTime()),
        )
        conn.execute(
            old_judgments.insert().values(
                **required,
                run_id="20260101-000000-abcdef",
                response_key="k0",
                criterion="polite",
                judge_key="jk",
                judge_model="judge-m",
                threshold=7.0,
                score=9.0,
                passed=True,
                attempts=1,
                cached=False,
                created_at=T0,
            )
        )
    engine.dispose()


def _sha256(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_OLD_JUDGMENT_COLUMNS = (
    "run_id",
    "response_key",
    "criterion",
    "judge_key",
    "judge_model",
    "threshold",
    "score",
    "passed",
    "attempts",
    "cached",
)


def test_revisions_are_ordered_and_head_is_last() -> None:
    from qualspec.store._migrate import file_revisions

    known = revisions()
    assert known == sorted(known) and len(known) >= 4
    assert known[:4] == ["0001", "0002", "0003", "0004"]
    assert known[-1] == head_revision()
    assert file_revisions() == known  # the file names carry the revision ids


def test_empty_database_is_migrated_to_head_on_open(db_url: str) -> None:
    with Store.open(db_url) as store:
        assert store.schema_revision == head_revision()
    assert _schema_diffs(db_url) == []
    with Store.open(db_url) as again:  # a second open is a no-op
        assert again.schema_revision == head_revision()


@pytest.mark.parametrize("revision", revisions()[:-1])
def test_upgrade_from_every_earlier_revision_keeps_data(db_url: str, revision: str) -> None:
    upgrade(db_url, revision)
    assert _current(db_url) == revision
    _insert_sample(db_url, revision)
    with Store.open(db_url) as store:
        assert store.schema_revision == head_revision()
        record = store.load_run("20260101-000000-abcdef")
        assert record.summary.status == "interrupted"
        assert record.summary.owner_pid is None
        assert [r.text for r in record.responses] == ["kept across migrations"]
        assert [r.kind for r in record.responses] == ["candidate"]
        assert [(j.evaluator, j.criterion, j.score) for j in record.judgments] == [
            ("criteria", "polite", 9.0)
        ]
        assert store.judgment_keys("20260101-000000-abcdef") == {("k0", "polite")}
        assert store.get_prompt("system_prompt", 1).text == "old"
        assert store.cache_get_many(["ck"])["ck"].text == "t"
        assert store.latest_unfinished_run("old-suite") == "20260101-000000-abcdef"
        store.acquire_run("20260101-000000-abcdef")  # the newer columns work
    assert _schema_diffs(db_url) == []


@pytest.mark.parametrize("revision", revisions()[:-1])
def test_downgrade_to_every_revision_and_back(db_url: str, revision: str) -> None:
    with Store.open(db_url) as store:
        run_id = store.create_run("suite", "h", {})
        store.cache_put_many([CacheEntry("ck", "judge", "p", "m", text="t")])
    downgrade(db_url, revision)
    assert _current(db_url) == revision
    upgrade(db_url)
    assert _schema_diffs(db_url) == []
    with Store.open(db_url) as store:
        assert store.get_run(run_id).suite_name == "suite"
        assert set(store.cache_get_many(["ck"])) == {"ck"}


def test_downgrade_to_base_drops_everything_and_open_recreates(db_url: str) -> None:
    Store.open(db_url).close()
    downgrade(db_url, "base")
    engine = create_engine(db_url)
    with engine.connect() as conn:
        from sqlalchemy import inspect

        left = set(inspect(conn).get_table_names()) - {"alembic_version"}
    engine.dispose()
    assert left == set()
    with Store.open(db_url) as store:
        assert store.list_runs() == []
    assert _schema_diffs(db_url) == []


def test_database_from_a_newer_qualspec_is_refused(db_url: str) -> None:
    Store.open(db_url).close()
    engine = create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    engine.dispose()
    with pytest.raises(SchemaVersionError, match="upgrade qualspec"):
        Store.open(db_url)


def test_earlier_revisions_are_all_tested() -> None:
    # the parametrised tests above run from every revision before head, 0004's too
    assert revisions()[:-1][:3] == ["0001", "0002", "0003"]
    assert "0003" in revisions()[:-1] and head_revision() >= "0004"


def _insert_0003_rows_raw(url: str) -> None:
    """Rows as a qualspec at revision 0003 wrote them, in plain SQL."""
    engine = create_engine(url)
    pg = engine.dialect.name == "postgresql"
    ts = "'2026-05-06 07:08:09+00'" if pg else "'2026-05-06 07:08:09.000000'"
    run = "20260101-000000-abcdef"
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO runs (id, suite_name, suite_hash, status, started_at, finished_at,"
                " metadata, owner_pid, owner_host, heartbeat_at) VALUES"
                f" (:id, 'old-suite', 'h0', 'finished', {ts}, {ts}, :meta, NULL, NULL, NULL)"
            ),
            {"id": run, "meta": '{"qualspec_version":"0.3.0"}'},
        )
        for key, index, error in (("k0", 0, None), ("k1", 1, None), ("k2", 2, "HTTP 500")):
            conn.execute(
                text(
                    "INSERT INTO responses (run_id, key, candidate, role, scenario, input_id,"
                    " temperature, effective_temperature, run_index, provider, model, text,"
                    " finish_reason, input_tokens, output_tokens, latency_s, cost_usd, attempts,"
                    " error, cached, prompt_versions, created_at) VALUES (:run, :key, 'small',"
                    " 'tutor', 'greeting', NULL, 0.5, 0.5, :idx, 'openai', 'gpt-x', :text,"
                    " 'stop', 10, 20, 0.25, 0.001, 1, :error, FALSE, :pv,"
                    f" {ts})"
                ),
                {
                    "run": run,
                    "key": key,
                    "idx": index,
                    "text": None if error else f"answer {key}",
                    "error": error,
                    "pv": '{"system":1}',
                },
            )
        for key, criterion, score, error, reason in (
            ("k0", "polite", 8.0, None, None),
            ("k0", "accurate", None, None, "no number"),
            ("k1", "polite", None, "HTTP 503", None),
        ):
            conn.execute(
                text(
                    "INSERT INTO judgments (run_id, response_key, criterion, judge_key,"
                    " judge_model, threshold, score, passed, reasoning, unscored_reason,"
                    " raw_text, input_tokens, output_tokens, latency_s, cost_usd, attempts,"
                    " error, cached, prompt_version, created_at) VALUES (:run, :key, :crit,"
                    " 'jk', 'openai/judge', 7.0, :score, NULL, 'why', :reason, '{}', 100, 5,"
                    f" 0.5, 0.01, 1, :error, FALSE, 3, {ts})"
                ),
                {
                    "run": run,
                    "key": key,
                    "crit": criterion,
                    "score": score,
                    "reason": reason,
                    "error": error,
                },
            )
    engine.dispose()


def test_0003_rows_read_back_as_candidates_judged_by_criteria(db_url: str) -> None:
    upgrade(db_url, "0003")
    _insert_0003_rows_raw(db_url)
    run_id = "20260101-000000-abcdef"
    with Store.open(db_url) as store:
        record = store.load_run(run_id)
        assert record.summary.status == "finished"
        assert record.summary.metadata == {"qualspec_version": "0.3.0"}
        assert [(r.key, r.kind, r.text) for r in record.responses] == [
            ("k0", "candidate", "answer k0"),
            ("k1", "candidate", "answer k1"),
            ("k2", "candidate", None),
        ]
        assert record.responses[0].prompt_versions == {"system": 1}
        assert record.responses[0].created_at == datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)
        got = [
            (j.response_key, j.criterion, j.evaluator, j.subject, j.scores, j.details)
            for j in record.judgments
        ]
        assert got == [
            ("k0", "accurate", "criteria", None, None, None),
            ("k0", "polite", "criteria", None, None, None),
            ("k1", "polite", "criteria", None, None, None),
        ]
        assert {(j.judge_model, j.threshold) for j in record.judgments} == {("openai/judge", 7.0)}
        assert store.judgment_keys(run_id) == {("k0", "polite"), ("k0", "accurate")}
        assert store.evaluation_keys(run_id) == {
            ("criteria", "k0", "polite"),
            ("criteria", "k0", "accurate"),
        }
        summary = record.summary
        assert (summary.n_responses, summary.n_judgments) == (3, 3)
        assert (summary.n_errors, summary.n_unscored) == (2, 1)
        # the migrated rows have the store's key: a retry replaces the error row, a late
        # duplicate of a success changes nothing (no second row either way)
        store.record_judgments(
            run_id,
            [
                judgment("k1", "polite", score=4.0, passed=False),
                judgment("k0", "polite", score=1.0),
            ],
        )
        after = {(j.response_key, j.criterion): j.score for j in store.load_run(run_id).judgments}
        assert after == {("k0", "accurate"): None, ("k0", "polite"): 8.0, ("k1", "polite"): 4.0}
    assert _schema_diffs(db_url) == []


@pytest.mark.parametrize("revision", revisions()[:-1])
def test_downgrade_keeps_what_the_older_schema_can_hold(db_url: str, revision: str) -> None:
    long_criterion = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(2000))
    with Store.open(db_url) as store:
        run_id = store.create_run("s" * 300, "h", {})
        kept = response("k1")
        store.record_responses(run_id, [kept, response("a1", kind="adhoc")])
        kept_j = judgment("k1", "tone")
        store.record_judgments(
            run_id,
            [
                kept_j,
                judgment("k1", "tone", evaluator="second_opinion"),
                judgment("k1", long_criterion),
                judgment("k1", "no-threshold", threshold=None),
            ],
        )
        store.prompt_version("p" * 300, "text")
        store.prompt_version("short", "text")
        # superseded rows: no revision before 0005 can hold them beside current ones
        store.record_responses(run_id, [response("stale")])
        store.record_judgments(run_id, [judgment("stale", "tone")])
        store.supersede(run_id, ["stale", "k1"], [("criteria", "stale", "tone")])
        store.record_responses(run_id, [kept])  # a current row beside a superseded one
        all_rows = store.load_run(run_id, include_superseded=True)
        assert len(all_rows.superseded_responses) == 2
        assert len(all_rows.superseded_judgments) == 1
        full = store.load_run(run_id)
    downgrade(db_url, revision)
    assert _current(db_url) == revision
    upgrade(db_url)
    assert _schema_diffs(db_url) == []
    with Store.open(db_url) as store:
        record = store.load_run(run_id, include_superseded=True)
        if revision >= "0005":  # superseded rows are held from 0005 on
            assert len(record.superseded_responses) == 2
            assert len(record.superseded_judgments) == 1
        else:
            assert record.superseded_responses == [] and record.superseded_judgments == []
        if revision >= "0004":  # unbounded text and any evaluation record: all kept
            assert record.summary.suite_name == "s" * 300
            assert record.responses == full.responses
            assert record.judgments == full.judgments
            assert [p.name for p in store.list_prompts()] == ["p" * 300, "short"]
            return
        assert record.summary.suite_name == "s" * 255
        assert record.responses == [kept]
        assert record.judgments == [kept_j]
        assert [p.name for p in store.list_prompts()] == ["short"]
        # the upgraded schema takes the new kinds of rows again
        store.record_judgments(run_id, [judgment("k1", long_criterion)])
        assert len(store.load_run(run_id).judgments) == 2


def _shape(url: str) -> dict[str, Any]:
    """Tables, columns (type, nullability, default), indexes and unique constraints."""
    from sqlalchemy import inspect

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            inspector = inspect(conn)
            shape: dict[str, Any] = {}
            for table in sorted(inspector.get_table_names()):
                shape[table] = {
                    "columns": [
                        (c["name"], str(c["type"]), c["nullable"], str(c.get("default")))
                        for c in inspector.get_columns(table)
                    ],
                    "indexes": sorted(
                        (
                            i["name"],
                            tuple(i["column_names"]),
                            bool(i["unique"]),
                            # a partial index's predicate, where the backend reflects it
                            sorted((k, str(v)) for k, v in i.get("dialect_options", {}).items()),
                        )
                        for i in inspector.get_indexes(table)
                    ),
                    "unique": sorted(
                        (u["name"], tuple(u["column_names"]))
                        for u in inspector.get_unique_constraints(table)
                    ),
                    "pk": tuple(inspector.get_pk_constraint(table)["constrained_columns"]),
                }
            return shape
    finally:
        engine.dispose()


def test_a_fresh_database_gets_exactly_the_schema_the_migrations_build(db_url: str) -> None:
    """Store.open creates an empty database's tables directly (no alembic on the way):
    the result must be what running every migration from the start gives."""
    with Store.open(db_url) as store:
        assert store.schema_revision == head_revision()
    fresh = _shape(db_url)
    downgrade(db_url, "base")
    upgrade(db_url)  # every migration, through alembic
    migrated = _shape(db_url)
    assert fresh == migrated


@pytest.mark.parametrize("revision", revisions()[:-1])
def test_a_response_without_a_temperature_is_kept_from_every_earlier_revision(
    db_url: str, revision: str
) -> None:
    """0007: ``responses.temperature`` NULL (no temperature sent, the provider's default)."""
    upgrade(db_url, revision)
    _insert_sample(db_url, revision)
    with Store.open(db_url) as store:  # upgraded to head on open
        run_id = store.create_run("s", "h", {})
        default = response("d", temperature=None, effective_temperature=None)
        store.record_responses(run_id, [default, response("n")])
        store.record_judgments(run_id, [judgment("d", "tone"), judgment("n", "tone")])
        record = store.load_run(run_id)
        assert [(r.key, r.temperature) for r in record.responses] == [("d", None), ("n", 0.7)]
        old = store.load_run("20260101-000000-abcdef").responses
        assert [r.temperature for r in old] == [0.0]  # rows from before keep theirs
    assert _schema_diffs(db_url) == []
    # going back to 0006 drops what its NOT NULL column cannot hold, and the judgments of
    # those responses; the rest comes back up intact
    downgrade(db_url, "0006")
    upgrade(db_url)
    assert _schema_diffs(db_url) == []
    with Store.open(db_url) as store:
        record = store.load_run(run_id)
        assert [r.key for r in record.responses] == ["n"]
        assert [j.response_key for j in record.judgments] == ["n"]
        assert [r.temperature for r in store.load_run("20260101-000000-abcdef").responses] == [0.0]


@pytest.mark.parametrize("revision", revisions()[:-1])
def test_reference_review_works_after_an_upgrade_from_every_earlier_revision(
    db_url: str, revision: str
) -> None:
    """0008: responses from before have no call key (so no reference to review); new
    references are reviewed, and going back below 0008 drops the reviews alone."""
    upgrade(db_url, revision)
    _insert_sample(db_url, revision)
    with Store.open(db_url) as store:
        old = store.load_run("20260101-000000-abcdef").responses
        assert [(r.key, r.call_key) for r in old] == [("k0", None)]
        assert store.reference_answers() == [] and store.reference_reviews() == {}
        run_id = store.create_run("s", "h", {})
        ref = response("ref", kind="reference", call_key="ck-ref", text='{"a": 1}')
        store.record_responses(run_id, [ref])
        store.set_reference_status("ck-ref", "disputed", "wrong", "alice")
        store.override_reference("ck-ref", '{"a": 2}', "fixed", "alice")
        review = store.reference_review("ck-ref")
        assert review is not None and review.status == "validated"
        assert [e.action for e in review.audit] == ["dispute", "override", "validate"]
    assert _schema_diffs(db_url) == []
    downgrade(db_url, "0007")
    upgrade(db_url)
    assert _schema_diffs(db_url) == []
    with Store.open(db_url) as store:
        assert store.reference_review("ck-ref") is None  # the reviews were dropped
        (kept,) = [r for r in store.load_run(run_id).responses if r.key == "ref"]
        assert (kept.text, kept.call_key) == ('{"a": 1}', None)  # the answer is kept


def test_reference_reviews_survive_a_reopen_at_head(db_url: str) -> None:
    with Store.open(db_url) as store:
        run_id = store.create_run("s", "h", {})
        store.record_responses(run_id, [response("ref", kind="reference", call_key="ck")])
        store.set_reference_status("ck", "validated", "ok", "alice")
    with Store.open(db_url) as store:
        review = store.reference_review("ck")
        assert review is not None and (review.status, review.validation_notes) == (
            "validated",
            "ok",
        )
