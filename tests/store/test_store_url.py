"""Where the database is, how it is shown, what is kept out of it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import qualspec
from helpers_urls import MASKED_FORMS
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
    # nor naming the Store (a SQLite file is served by the stdlib driver); an in-memory
    # database is SQLAlchemy's
    code = (
        "import sys, qualspec.store as s; "
        "assert 'sqlalchemy' not in sys.modules and 'alembic' not in sys.modules; "
        "s.Store; assert 'sqlalchemy' not in sys.modules; "
        "s.Store.open('sqlite://').close(); assert 'sqlalchemy' in sys.modules"
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


@pytest.mark.parametrize(("url", "shown"), MASKED_FORMS)
def test_display_masks_passwords_in_every_form(url: str, shown: str) -> None:
    assert display_url(url) == shown
    assert "canary" not in display_url(url)
    assert display_url(shown) == shown  # idempotent


def test_display_keeps_what_is_not_a_secret() -> None:
    for text in (
        "sqlite:////tmp/a:b@c.db",
        "sqlite:///x.db",
        "https://gw.example/v1?model=x&max_tokens=5",
        "postgresql+psycopg://alice@db/q",
        "see `qualspec runs list`",
    ):
        assert display_url(text) == text


def test_one_masking_function_serves_metadata_and_argv() -> None:
    """(The ``--verbose`` log's filter: ``tests/cli/test_cli_logging.py``.)"""
    for url, shown in MASKED_FORMS:
        assert redact({"argv": ["--db", url], "base_url": url}) == {
            "argv": ["--db", shown],
            "base_url": shown,
        }
    # no second copy of the masking (the engine's run metadata had its own, ``_mask_url``)
    copies = [
        path.name
        for path in Path(qualspec.__file__).parent.rglob("*.py")
        if re.search(r"\b(_mask_url|_URL_PASSWORD)\b", path.read_text(encoding="utf-8"))
    ]
    assert copies == []


def test_stored_run_metadata_masks_url_passwords() -> None:
    with Store.open("sqlite://") as store:
        run_id = store.create_run(
            "s",
            "h",
            {
                "argv": ["run", "s.yaml", "--db", "postgresql://u@h/db?password=canary"],
                "providers": {"lab": {"base_url": "http://u:canary@lab/v1?api-key=canary"}},
            },
        )
        store.update_run_metadata(run_id, {"note": "via https://x/v1?token=canary"})
        meta = store.get_run(run_id).metadata
    assert "canary" not in repr(meta)
    assert meta["argv"][-1] == "postgresql://u@h/db?password=***"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u@127.0.0.1:1/db?password=canary&connect_timeout=2",
        "postgresql://127.0.0.1:1/db?user=u&password=canary&connect_timeout=2",
        "bogus://u:canary@h/x?password=canary",
    ],
)
def test_cli_errors_never_print_a_url_password(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from qualspec.cli import main

    with pytest.raises(SystemExit):
        main(["runs", "list", "--db", url])
    captured = capsys.readouterr()
    assert "canary" not in captured.err + captured.out
    assert "password=***" in captured.err or ":***@" in captured.err


def test_database_exists_creates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from qualspec.store import database_exists

    monkeypatch.delenv("QUALSPEC_DATABASE_URL", raising=False)
    monkeypatch.setenv("QUALSPEC_HOME", str(tmp_path / "home"))
    assert not database_exists()
    assert not (tmp_path / "home").exists()  # not even the folder
    file = tmp_path / "q.db"
    assert not database_exists(f"sqlite:///{file}") and not file.exists()
    assert not database_exists("sqlite:///:memory:")
    Store.open(f"sqlite:///{file}").close()
    assert database_exists(f"sqlite:///{file}")
    assert database_exists("postgresql://u@127.0.0.1:1/x")  # a server's: taken to exist
