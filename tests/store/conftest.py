"""Store fixtures: every store test runs on SQLite and on a real PostgreSQL server.

PostgreSQL comes from ``QUALSPEC_TEST_POSTGRES_URL`` (see README.md here). Each test gets
a fresh schema (through ``search_path``), dropped afterwards. Without the variable the
PostgreSQL cases are skipped locally and FAIL when ``CI`` is set.
"""

from __future__ import annotations

import os
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


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL to an empty database: a SQLite file, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    from sqlalchemy import text

    admin = request.getfixturevalue("_pg_admin")
    schema = f"qs_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield _schema_url(postgres_base_url(), schema)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """An open, migrated Store on ``db_url``."""
    opened = Store.open(db_url)
    yield opened
    opened.close()
