"""The FastAPI app (``create_app``) and the server (``serve``, ``qualspec serve``)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from qualspec.web._security import DEFAULT_MAX_BODY, TOKEN_ENV, Guard, check_bind
from qualspec.web._state import WebState

if TYPE_CHECKING:
    from fastapi import FastAPI

    from qualspec.engine import Session
    from qualspec.spec import ProviderConfig

__all__ = ["create_app", "serve"]


def create_app(
    *,
    db: str | None = None,
    token: str | None = None,
    providers: Mapping[str, ProviderConfig] | None = None,
    session: Session | None = None,
    max_body: int = DEFAULT_MAX_BODY,
) -> Any:
    """The web app: JSON API under ``/api``, pages, OpenAPI at ``/openapi.json``.

    Example::

        import uvicorn
        from qualspec.web import create_app
        uvicorn.run(create_app(db="sqlite:///evals.db"), host="127.0.0.1", port=8000)

    Args:
        db: The database URL (default ``$QUALSPEC_DATABASE_URL`` or ``.qualspec/``).
        token: Required on every route when set (``Authorization: Bearer T``, or the
            cookie ``/login?token=T`` sets).
        providers: Named provider connections for the Lab's models.
        session: An open session to use (default: one opened, on first use, in the
            server's event loop, and closed when the server stops).
        max_body: The largest request body accepted, in bytes (413 above).

    Returns:
        The ASGI app (a FastAPI app wrapped in the guard).
    """
    from fastapi import FastAPI

    from qualspec.version import __version__
    from qualspec.web._api import router as api
    from qualspec.web._compress import PageCache, with_gzip
    from qualspec.web._errors import install_error_pages
    from qualspec.web._pages import router as pages
    from qualspec.web._references import api_router as reference_api
    from qualspec.web._references import page_router as reference_pages
    from qualspec.web._rubrics import api_router as rubric_api
    from qualspec.web._rubrics import page_router as rubric_pages
    from qualspec.web._view_cache import ViewCache

    web = WebState(db=db, providers=providers, session=session)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await web.aclose()

    app = FastAPI(
        title="qualspec",
        version=__version__,
        description=(
            "Runs, results, diffs, reference review, rubric scores and the Lab of a qualspec store."
        ),
        docs_url=None,  # the page at /docs is ours: Swagger UI would load from a CDN
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.web = web
    install_error_pages(app)
    app.state.pages = PageCache()  # the pages of finished runs, rendered once
    app.state.views = ViewCache()  # the snapshots of runs last viewed
    app.include_router(api)
    app.include_router(reference_api)
    app.include_router(rubric_api)
    app.include_router(pages)
    app.include_router(reference_pages)
    app.include_router(rubric_pages)
    guarded = Guard(with_gzip(app), token=token, max_body=max_body)
    guarded.fastapi = app  # type: ignore[attr-defined]
    return guarded


def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    db: str | None = None,
) -> None:
    """Serve the app with uvicorn until interrupted (``qualspec serve``).

    Raises:
        ConfigError: ``host`` is not loopback and there is no token, or uvicorn or
            fastapi is missing (``pip install 'qualspec[web]'``).
    """
    token = token or os.environ.get(TOKEN_ENV) or None
    check_bind(host, token)
    try:
        import fastapi  # noqa: F401
        import uvicorn
    except ImportError as exc:
        from qualspec.errors import MissingDependencyError

        raise MissingDependencyError(exc.name or "fastapi", extra="web") from None
    app = create_app(db=db, token=token)
    shown = f"[{host}]" if ":" in host else host
    print(f"qualspec web app on http://{shown}:{port}/  (Ctrl-C stops it)", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")
