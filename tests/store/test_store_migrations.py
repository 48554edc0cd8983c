"""Migrations: from an empty database and from every earlier revision, on both backends."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from qualspec.errors import SchemaVersionError
from qualspec.store import CacheEntry, Store, downgrade, head_revision, revisions, upgrade
from qualspec.store._schema import cache_entries, metadata, prompt_versions, responses, runs

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


def _insert_sample(url: str) -> None:
    """Rows using only the columns of the first revision."""
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
    engine.dispose()


def test_revisions_are_ordered_and_head_is_last() -> None:
    from qualspec.store._migrate import file_revisions

    known = revisions()
    assert known == sorted(known) and len(known) >= 3
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
    _insert_sample(db_url)
    with Store.open(db_url) as store:
        assert store.schema_revision == head_revision()
        record = store.load_run("20260101-000000-abcdef")
        assert record.summary.status == "interrupted"
        assert record.summary.owner_pid is None
        assert [r.text for r in record.responses] == ["kept across migrations"]
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
