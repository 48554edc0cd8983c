"""Store fixtures: every store test runs on SQLite and on a real PostgreSQL server.

PostgreSQL comes from ``QUALSPEC_TEST_POSTGRES_URL`` (see README.md here). A test of an
empty database (``db_url`` alone) gets a fresh schema (through ``search_path``), dropped
afterwards. A test of an open store (``store``) gets a database already at the newest
schema and holding no rows: on SQLite a copy of a template file migrated once per session,
on PostgreSQL one migrated schema per session (per worker) emptied after each test; creating
and dropping a schema per test took most of these tests' time. Without the variable the
PostgreSQL cases are skipped locally and FAIL when ``CI`` is set.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualspec.store import Store, resolve_url

POSTGRES_ENV = "QUALSPEC_TEST_POSTGRES_URL"


def postgres_base_url() -> str:
    """The configured server URL, or fail (CI) / skip (locally) the calling test."""
    base = os.environ.get(POSTGRES_ENV, "").strip()
    if not base:
        if os.environ.get("CI"):
            pytest.fail(
                f"{POSTGRES_ENV} is not set but CI is: the PostgreSQL store tests must run "
                "in CI; start the server and export the URL (see tests/store/README.md)",
                pytrace=False,
            )
        pytest.skip(f"PostgreSQL not configured: export {POSTGRES_ENV} (see tests/store/README.md)")
    return resolve_url(base)


@pytest.fixture(scope="session")
def _pg_admin() -> Iterator[Any]:
    from sqlalchemy import create_engine

    engine = create_engine(postgres_base_url(), isolation_level="AUTOCOMMIT")
    yield engine
    engine.dispose()


def _schema_url(base: str, schema: str) -> str:
    from sqlalchemy.engine import make_url

    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite store file at the newest schema with no rows, made once per session."""
    path = tmp_path_factory.mktemp("store-template") / "store.db"
    Store.open(f"sqlite:///{path}").close()
    return path


class _MigratedSchema:
    """One PostgreSQL schema at the newest schema, emptied after each test that used it."""

    def __init__(self, admin: Any) -> None:
        self.admin = admin
        self.schema: str | None = None
        self.tables: tuple[str, ...] = ()  # parents before the tables naming them

    def url(self) -> str:
        if self.schema is None:
            from sqlalchemy import MetaData

            self.schema = _create_schema(self.admin)
            Store.open(_schema_url(postgres_base_url(), self.schema)).close()
            meta = MetaData(schema=self.schema)
            meta.reflect(self.admin)
            self.tables = tuple(table.name for table in meta.sorted_tables)
        return _schema_url(postgres_base_url(), self.schema)

    def empty(self) -> None:
        """Delete every row but the schema version; a schema the test changed is dropped
        (the next test migrates a new one)."""
        from sqlalchemy import text

        from qualspec.store import head_revision

        schema = self.schema
        if schema is None:
            return
        try:
            with self.admin.execution_options(isolation_level="READ COMMITTED").begin() as conn:
                conn.execute(text("SET LOCAL lock_timeout = '30s'"))
                conn.execute(text(f'SET LOCAL search_path TO "{schema}"'))
                if self._tables(conn, schema) != frozenset(self.tables):
                    raise RuntimeError(f"the test changed the tables of {schema}")
                version = conn.execute(text("SELECT version_num FROM alembic_version")).all()
                if [tuple(row) for row in version] != [(head_revision(),)]:
                    raise RuntimeError(f"the test changed the schema version of {schema}")
                for table in reversed(self.tables):  # the tables naming others first
                    if table != "alembic_version":
                        conn.execute(text(f'DELETE FROM "{table}"'))
                sequences = conn.execute(
                    text(
                        "SELECT sequence_name FROM information_schema.sequences "
                        "WHERE sequence_schema = :s"
                    ),
                    {"s": schema},
                ).scalars()
                for sequence in list(sequences):
                    conn.execute(text(f'ALTER SEQUENCE "{schema}"."{sequence}" RESTART'))
        except Exception:
            self.drop()

    def drop(self) -> None:
        if self.schema is not None:
            _drop_schema(self.admin, self.schema)
            self.schema = None

    @staticmethod
    def _tables(conn: Any, schema: str) -> frozenset[str]:
        from sqlalchemy import text

        rows = conn.execute(
            text("SELECT tablename FROM pg_tables WHERE schemaname = :s"), {"s": schema}
        )
        return frozenset(rows.scalars())


@pytest.fixture(scope="session")
def _pg_migrated(_pg_admin: Any) -> Iterator[_MigratedSchema]:
    migrated = _MigratedSchema(_pg_admin)
    yield migrated
    migrated.drop()


def _create_schema(admin: Any) -> str:
    from sqlalchemy import text

    schema = f"qs_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    return schema


def _drop_schema(admin: Any, schema: str) -> None:
    from sqlalchemy import text

    with admin.connect() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL to an empty database: a SQLite file, or a fresh PostgreSQL schema; for a test
    that also asks for ``store``, one already at the newest schema (what ``store`` opens)."""
    migrated = "store" in request.fixturenames
    if request.param == "sqlite":
        if migrated:
            shutil.copyfile(request.getfixturevalue("_sqlite_template"), tmp_path / "store.db")
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    if migrated:
        pg: _MigratedSchema = request.getfixturevalue("_pg_migrated")
        try:
            yield pg.url()
        finally:
            pg.empty()
        return
    admin = request.getfixturevalue("_pg_admin")
    schema = _create_schema(admin)
    try:
        yield _schema_url(postgres_base_url(), schema)
    finally:
        _drop_schema(admin, schema)


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """An open, migrated Store on ``db_url``."""
    opened = Store.open(db_url)
    yield opened
    opened.close()
