"""Where the database is: URL resolution and display (no SQLAlchemy import here)."""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["DEFAULT_HOME", "database_exists", "display_url", "resolve_url"]

DEFAULT_HOME = ".qualspec"
# user:password@ in a URL's authority (a password may itself contain '@': up to the last one)
_PASSWORD = re.compile(r"(?P<head>://[^/@:?#\s]*:)[^/\s]*@")
# query parameters named like secrets (?password=, &api-key=, ?key=, ?access_token=, but
# not ?max_tokens=), and the password of a libpq keyword string (host=h password=x)
_SECRET_NAME = r"[\w.-]*(?:password|passwd|pwd|secret|token|key|auth|signature|sig|credentials?)"
_QUERY_SECRET = re.compile(rf"(?P<head>[?&;]{_SECRET_NAME}=)[^&#\s]*", re.IGNORECASE)
_KEYWORD_SECRET = re.compile(
    r"(?P<head>(?<![\w?&;])(?:password|passwd|sslpassword)\s*=\s*)(?:'[^']*'|[^\s'&#]+)",
    re.IGNORECASE,
)
_POSTGRES = re.compile(r"^(postgres|postgresql)://", re.IGNORECASE)


def resolve_url(url: str | None = None) -> str:
    """The database URL to use.

    Args:
        url: An explicit URL (``--db``); wins over everything else.

    Returns:
        ``url``, else ``$QUALSPEC_DATABASE_URL``, else ``sqlite:///<home>/qualspec.db``
        with home ``$QUALSPEC_HOME`` or ``./.qualspec`` (created). ``postgres://`` and
        ``postgresql://`` are rewritten to the psycopg 3 driver.
    """
    chosen = url or os.environ.get("QUALSPEC_DATABASE_URL") or ""
    if not chosen:
        home = Path(os.environ.get("QUALSPEC_HOME") or DEFAULT_HOME)
        home.mkdir(parents=True, exist_ok=True)
        return "sqlite:///" + str((home / "qualspec.db").resolve())
    return _POSTGRES.sub("postgresql+psycopg://", chosen.strip(), count=1)


def database_exists(url: str | None = None) -> bool:
    """Whether the database :func:`resolve_url` would open exists, creating nothing.

    A SQLite file is looked for (the default one under ``$QUALSPEC_HOME`` or
    ``./.qualspec`` included; an in-memory one never exists); a database server's is taken
    to exist. For read-only commands that must leave no database behind (a dry run).
    """
    chosen = url or os.environ.get("QUALSPEC_DATABASE_URL") or ""
    if not chosen:
        home = Path(os.environ.get("QUALSPEC_HOME") or DEFAULT_HOME)
        return (home / "qualspec.db").is_file()
    if not chosen.strip().lower().startswith("sqlite"):
        return True
    path = chosen.split(":///", 1)[1] if ":///" in chosen else ""
    return bool(path) and not path.startswith(":memory:") and Path(path).is_file()


def display_url(text: str) -> str:
    """``text`` with every password and key in the URLs it contains replaced by ``***``.

    The one masking function for URLs (database URLs, provider ``base_url`` values, and
    any message or command line that contains them): ``user:PASSWORD@host``, query
    parameters such as ``?password=``, ``?api-key=``, ``?key=``, ``?token=``, and
    ``password=`` in a libpq keyword string. Idempotent; safe for logs, messages and
    stored metadata.

    Example: ``display_url("postgresql://u@h/db?password=pw")`` ->
    ``"postgresql://u@h/db?password=***"``.
    """
    if "=" not in text and "@" not in text:
        return text
    text = _PASSWORD.sub(r"\g<head>***@", text)
    text = _QUERY_SECRET.sub(r"\g<head>***", text)
    return _KEYWORD_SECRET.sub(r"\g<head>***", text)
