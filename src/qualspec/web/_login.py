"""Token mode's login form: what a browser without the token is shown (``/login``, and a
401 for any page), posting the token back to ``/login`` (see ``_security``).

The form posts to this site only (CSP ``form-action 'self'``); a post from another site is
refused before it is read, and the page after the login is a path of this site
(``_security.local_path``), never another host.
"""

from __future__ import annotations

__all__ = ["PUBLIC", "page", "wants_html"]

# what the login form itself loads: served without the token (the package's own files)
PUBLIC = frozenset({"/static/report.css", "/static/web.css", "/static/favicon.svg", "/favicon.ico"})


def wants_html(headers: dict[str, str]) -> bool:
    """Whether the client is a browser asking for a page (``Accept`` names HTML)."""
    return "text/html" in headers.get("accept", "")


def page(next_path: str, error: str | None = None) -> bytes:
    """The login form; after the login the browser goes to ``next_path`` (a local path,
    already checked)."""
    from qualspec.web._pages import _env

    text: str = (
        _env().get_template("login.html.j2").render(title="Log in", next=next_path, error=error)
    )
    return text.encode()
