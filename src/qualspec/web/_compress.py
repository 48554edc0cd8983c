"""Responses at size: gzip, and the pages of settled runs rendered once.

* :func:`with_gzip`: every response of 1 KB or more is gzip-compressed (level 6) for a
  client that accepts it, except server-sent events (``.../stream``), which must reach
  the client as they are written.
* :class:`PageCache`: a finished run never changes, so its page is rendered once and kept
  compressed in memory (64 MB at most, least recently viewed dropped first), under the
  run's id, status, finish time, record counts and metadata, the page's URL and the
  qualspec version: a run resumed later (or still in progress: never kept) is rendered
  again.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["PageCache", "page_key", "with_gzip"]

_ASGI = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]
MIN_SIZE = 1024
LEVEL = 6
_SETTLED = frozenset({"finished", "failed", "interrupted", "budget_exceeded"})


def with_gzip(app: Any) -> _ASGI:
    """``app`` with gzip-compressed responses (server-sent events left as they are)."""
    from starlette.middleware.gzip import GZipMiddleware

    zipped = GZipMiddleware(app, minimum_size=MIN_SIZE, compresslevel=LEVEL)

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and not str(scope.get("path", "")).endswith("/stream"):
            await zipped(scope, receive, send)
        else:
            await app(scope, receive, send)

    return asgi


def page_key(summary: Any, url: str) -> str | None:
    """The cache key of a run's page at ``url``; None for a run still in progress."""
    if summary.status not in _SETTLED or summary.finished_at is None:
        return None
    from qualspec.version import __version__

    facts = [
        __version__,
        summary.id,
        summary.status,
        str(summary.finished_at),
        summary.n_responses,
        summary.n_judgments,
        summary.n_errors,
        summary.n_unscored,
        summary.metadata,
        url,
    ]
    return json.dumps(facts, sort_keys=True, default=str)


class PageCache:
    """Compressed pages by key, at most ``max_bytes`` of them, least recently used out."""

    def __init__(self, max_bytes: int = 64 * 2**20) -> None:
        self.max_bytes = max_bytes
        self._pages: OrderedDict[str, tuple[bytes, dict[str, str]]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()  # put runs in worker threads

    def get(self, key: str) -> tuple[bytes, dict[str, str]] | None:
        """The compressed page and its headers, or None."""
        with self._lock:
            found = self._pages.get(key)
            if found is not None:
                self._pages.move_to_end(key)
            return found

    def put(self, key: str, page: str, headers: Mapping[str, str]) -> None:
        """Keep ``page`` (compressed) with its ``headers``."""
        body = gzip.compress(page.encode("utf-8"), LEVEL)
        if len(body) > self.max_bytes:
            return
        with self._lock:
            old = self._pages.pop(key, None)
            if old is not None:
                self._size -= len(old[0])
            self._pages[key] = (body, dict(headers))
            self._size += len(body)
            while self._size > self.max_bytes:
                _, (dropped, _) = self._pages.popitem(last=False)
                self._size -= len(dropped)

    def response(self, key: str, accept_encoding: str) -> Any:
        """The kept page as a response (compressed when the client accepts gzip), or None."""
        from fastapi.responses import Response

        found = self.get(key)
        if found is None:
            return None
        body, headers = found
        headers = {**headers, "Vary": "Accept-Encoding"}
        if "gzip" in accept_encoding:
            headers["Content-Encoding"] = "gzip"
        else:
            body = gzip.decompress(body)
        return Response(body, media_type="text/html; charset=utf-8", headers=headers)
