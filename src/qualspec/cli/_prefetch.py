"""The HTTP client imported beside a run's start-up, in a background thread.

Importing aiohttp makes two SSL contexts, each loading the system's CA certificates:
some 100 ms of OpenSSL work in which Python's lock is released. Imported where the run
needs it, after the suite and the plan, those 100 ms came before the first call. Imported
by a background thread from the command's first step on, they overlap the suite's
loading (pydantic, the suite models, the plan) on a second core; the main thread's own
``import aiohttp`` later waits for that import to finish, as any second importer does.

Two threads importing the same module at once wait for each other (each module has
its own lock), which is safe unless the two imports run into each other from both ends
of a cycle (a package whose ``__init__`` imports its own submodules, like ``asyncio``).
So the standard modules that both aiohttp and the start-up import are imported first,
on the main thread; the thread then imports only what aiohttp alone needs.
"""

from __future__ import annotations

import argparse
import importlib
import re
import threading
from pathlib import Path

from qualspec.cli._collector import HTTP_TYPES

__all__ = ["prefetch_http"]

# A suite that names a built-in HTTP provider type (``type: openai``, ``openai/gpt-4o``);
# matched in the file's text: a false match only imports aiohttp early.
_HTTP_NAMES = re.compile(rb"\b(?:%s)\b" % b"|".join(sorted(t.encode() for t in HTTP_TYPES)))

# The modules both aiohttp and a run's start-up import (measured with aiohttp 3.14 and
# Python 3.11; each pulls in its own submodules): imported on the main thread first.
_SHARED = (
    "asyncio",
    "base64",
    "calendar",
    "concurrent.futures",
    "datetime",
    "email.message",
    "email.utils",
    "hashlib",
    "json",
    "locale",
    "pickle",
    "platform",
    "ssl",
    "subprocess",
    "typing_extensions",
    "unicodedata",
    "uuid",
)


def prefetch_http(ns: argparse.Namespace) -> threading.Thread | None:
    """Start importing aiohttp in a daemon thread when ``qualspec run``'s suite file (or a
    model its ``--judge`` or ``--model`` names) names an HTTP provider; the thread, or None
    when nothing was started (a dry run, no HTTP provider named, the file unreadable,
    aiohttp imported already)."""
    import sys

    if "aiohttp" in sys.modules or getattr(ns, "dry_run", False):
        return None
    named = [getattr(ns, "judge", None), getattr(ns, "model", None)]
    if not _names_http(ns.suite, [name for name in named if name]):
        return None
    for name in _SHARED:
        importlib.import_module(name)
    thread = threading.Thread(target=_import_quietly, name="qualspec-prefetch", daemon=True)
    thread.start()
    return thread


def _names_http(suite: str | Path, models: list[str]) -> bool:
    if any(_HTTP_NAMES.search(model.encode("utf-8", "replace")) for model in models):
        return True
    path = Path(suite)
    try:  # a regular file only: a pipe read here would be empty when the suite is loaded
        return path.is_file() and _HTTP_NAMES.search(path.read_bytes()) is not None
    except OSError:  # the suite's loading reports it, in its own words
        return False


def _import_quietly() -> None:
    """Import aiohttp; a failure is left for the main thread's own import to report."""
    try:
        importlib.import_module("aiohttp")
    except BaseException:  # noqa: BLE001, S110 - the main thread imports it again and reports
        pass
