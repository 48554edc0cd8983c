"""Where the database is, how it is shown, what is kept out of it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from qualspec.errors import StoreError
from qualspec.store import Store, display_url, redact, resolve_url


def test_default_is_sqlite_under_qualspec_home(tmp_path: Path) -> None:
    # the suite's autouse fixture points QUALSPEC_HOME at a temporary folder
    url = resolve_url()
    assert url.startswith("sqlite:///") and url.endswith("/qualspec-home/qualspec.db")
    with Store.open() as store:
        assert store.backend == "sqlite"
        assert store.url_for_display == url
    assert (tmp_path / "qualspec-home" / "qualspec.db").is_file()


def test_default_home_is_dot_qualspec(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("QUALSPEC_HOME")
    monkeypatch.chdir(tmp_path)
    assert resolve_url() == f"sqlite:///{tmp_path.resolve()}/.qualspec/qualspec.db"
    assert (tmp_path / ".qualspec").is_dir()


def test_argument_beats_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUALSPEC_DATABASE_URL", "postgres://u:pw@db.example/q")
    assert resolve_url() == "postgresql+psycopg://u:pw@db.example/q"
    assert resolve_url("sqlite:///x.db") == "sqlite:///x.db"
    assert resolve_url("postgresql://h/q") == "postgresql+psycopg://h/q"
    assert resolve_url("postgresql+psycopg2://h/q") == "postgresql+psycopg2://h/q"


def test_display_masks_the_password() -> None:
    assert display_url("postgresql+psycopg://alice:s3cr%40t@db:5432/q?sslmode=require") == (
        "postgresql+psycopg://alice:***@db:5432/q?sslmode=require"
    )
    assert display_url("postgresql+psycopg://alice@db/q") == "postgresql+psycopg://alice@db/q"
    assert display_url("sqlite:////tmp/a:b@c.db") == "sqlite:////tmp/a:b@c.db"


def test_store_display_and_errors_never_show_the_password() -> None:
    url = "postgresql://qs:canary-pw-123@127.0.0.1:1/none"
    with pytest.raises(StoreError) as caught:
        Store.open(url)
    message = str(caught.value)
    assert "canary-pw-123" not in message and "qs:***@127.0.0.1:1" in message
    assert "\n" not in message


def test_redact_replaces_secret_values_recursively() -> None:
    meta = {
        "argv": ["run", "--db", "x"],
        "candidates": [{"api_key": "sk-1", "max_tokens": 32, "model": "m"}],
        "Authorization": "Bearer abc",
        "client_secret": {"nested": "x"},
        "password": None,
        "note": "Bearer sk-in-a-string",
        "token_count": 3,
    }
    assert redact(meta) == {
        "argv": ["run", "--db", "x"],
        "candidates": [{"api_key": "***", "max_tokens": 32, "model": "m"}],
        "Authorization": "***",
        "client_secret": "***",
        "password": None,
        "note": "***",
        "token_count": 3,
    }
    assert meta["candidates"][0]["api_key"] == "sk-1"  # type: ignore[index]


def test_importing_the_package_does_not_import_sqlalchemy() -> None:
    code = (
        "import sys, qualspec.store as s; "
        "assert 'sqlalchemy' not in sys.modules and 'alembic' not in sys.modules; "
        "s.Store; assert 'sqlalchemy' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_in_memory_sqlite_works_across_threads() -> None:
    import threading

    with Store.open("sqlite://") as store:
        run_id = store.create_run("mem", "h", {})
        seen: list[str] = []
        thread = threading.Thread(target=lambda: seen.append(store.get_run(run_id).suite_name))
        thread.start()
        thread.join()
        assert seen == ["mem"]


def test_sqlite_file_uses_wal_and_a_busy_timeout(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "wal.db"
    with Store.open(f"sqlite:///{path}") as store:
        store.create_run("s", "h", {})
        from sqlalchemy import text

        with store._db.read() as conn:  # the pooled connection's settings
            assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 30000
            assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
            assert conn.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL
    plain = sqlite3.connect(path)
    assert plain.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    plain.close()
