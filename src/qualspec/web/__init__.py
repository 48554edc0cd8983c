"""The web app: a JSON API, the results viewer and the Lab (FastAPI, ``qualspec serve``).

Needs the ``web`` extra (``pip install 'qualspec[web]'``); imported lazily, so
``import qualspec.web`` works without it.

Example::

    from qualspec.web import create_app
    app = create_app(db="sqlite:///evals.db", token="s3cret")  # any ASGI server runs it
    keep_run_view(store, run_id)  # a finished run's page snapshot, kept (no web extra needed)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qualspec.lazy import lazy_exports

if TYPE_CHECKING:
    from qualspec.web._app import create_app, serve
    from qualspec.web._security import COOKIE, DEFAULT_MAX_BODY, TOKEN_ENV, check_bind
    from qualspec.web._view_cache import keep_run_view, run_page_parts

_EXPORTS = {
    "COOKIE": "_security",
    "DEFAULT_MAX_BODY": "_security",
    "TOKEN_ENV": "_security",
    "check_bind": "_security",
    "create_app": "_app",
    "keep_run_view": "_view_cache",
    "run_page_parts": "_view_cache",
    "serve": "_app",
}

__all__ = [
    "COOKIE",
    "DEFAULT_MAX_BODY",
    "TOKEN_ENV",
    "check_bind",
    "create_app",
    "keep_run_view",
    "run_page_parts",
    "serve",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
