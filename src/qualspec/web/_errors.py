"""How the app answers an error: a page with the nav bar for a browser, JSON for the rest.

* ``HTTPException`` (an unknown run, reference or page): a browser asking for a page
  (``Accept`` names HTML, path not under ``/api``) gets an HTML page saying what is
  missing, with the nav bar; an API client keeps FastAPI's ``{"detail": ...}``.
* A request that does not validate is 422 as FastAPI shapes it, with any non-finite number
  it held (``NaN``, ``Infinity``) written as text: JSON cannot carry them, and FastAPI's own
  handler failed on them with a 500.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["install_error_pages"]

_TITLES = {400: "Bad request", 403: "Refused", 404: "Not found", 405: "Method not allowed"}


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by its text."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _wants_page(request: Any) -> bool:
    path: str = request.url.path
    if path.startswith("/api/") or path == "/openapi.json":
        return False
    return "text/html" in request.headers.get("accept", "")


def install_error_pages(app: Any) -> None:
    """Register the handlers on the FastAPI ``app``."""
    from fastapi.encoders import jsonable_encoder
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, Response
    from starlette.exceptions import HTTPException

    from qualspec.web._pages import render

    async def http_error(request: Any, exc: HTTPException) -> Response:
        if _wants_page(request):
            detail = exc.detail if isinstance(exc.detail, str) else None
            title = _TITLES.get(exc.status_code, f"Error {exc.status_code}")
            page = render(
                "error.html.j2",
                status_code=exc.status_code,
                title=title,
                status=exc.status_code,
                detail=detail,
                path=request.url.path,
            )
            page.headers.update(exc.headers or {})
            return page
        return JSONResponse({"detail": exc.detail}, exc.status_code, headers=exc.headers)

    async def invalid(request: Any, exc: RequestValidationError) -> Response:
        errors = _finite(jsonable_encoder(exc.errors()))
        return JSONResponse({"detail": errors}, status_code=422)

    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
