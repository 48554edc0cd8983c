"""Where the database is: URL resolution and display (no SQLAlchemy import here)."""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["DEFAULT_HOME", "display_url", "resolve_url"]

DEFAULT_HOME = ".qualspec"
_PASSWORD = re.compile(r"(?P<head>://[^/@:?#]*:)[^@/]*@")
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


def display_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (safe for logs and messages)."""
    return _PASSWORD.sub(r"\g<head>***@", url, count=1)
