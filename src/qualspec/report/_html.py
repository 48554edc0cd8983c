"""The HTML report: one self-contained file that works offline (``qualspec report --html``).

The page is rendered by jinja2 with autoescaping on: every name, answer, reasoning and
error is escaped. It loads nothing (no script, no font, no image, no URL of any kind):
its one ``<style>`` element is allowed by a sha256 hash in a Content-Security-Policy
``<meta>`` tag that forbids everything else (``default-src 'none'``). The role tabs are
radio buttons and CSS, the charts SVG drawn in Python (:mod:`._html_svg`), each answer a
``<details>`` element: the page needs no script at all.
"""

from __future__ import annotations

import base64
import hashlib
import os
from importlib import resources
from typing import TYPE_CHECKING, Any

from qualspec.report._html_view import build_view
from qualspec.report._results_file import write_text_atomic

if TYPE_CHECKING:
    import jinja2

    from qualspec.analysis import RunAnalysis
    from qualspec.providers import PriceTable
    from qualspec.store import RunRecord

__all__ = ["render_html", "write_html"]

_TEMPLATES = "templates"


def _read(name: str) -> str:
    return resources.files("qualspec.report").joinpath(_TEMPLATES, name).read_text("utf-8")


def page_template(name: str) -> jinja2.Template:
    """The page template ``name``: autoescaped (every name and answer from a run is
    escaped), strict about undefined names, with jinja2's block whitespace trimmed."""
    import jinja2

    env = jinja2.Environment(
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env.from_string(_read(name))


def _role_css(n_roles: int) -> str:
    """One rule per role tab: its radio shows its panels and marks its label."""
    rules = []
    for i in range(n_roles):
        rules.append(
            f"#rt-{i}:checked~.scenarios .rp-{i}{{display:block}}"
            f"#rt-{i}:checked~.tabbar label[for=rt-{i}]{{background:var(--tab-on);"
            "color:var(--tab-on-fg);border-color:var(--tab-on)}"
            f"#rt-{i}:focus-visible~.tabbar label[for=rt-{i}]{{outline:2px solid var(--accent)}}"
        )
    return "\n".join(rules)


def csp_for(style: str) -> str:
    """The page's Content-Security-Policy: nothing but its own style element."""
    digest = base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode()
    return (
        "default-src 'none'; "
        f"style-src 'sha256-{digest}'; "
        "img-src 'none'; script-src 'none'; base-uri 'none'; form-action 'none'"
    )


def render_html(
    record: RunRecord,
    *,
    prices: PriceTable | None = None,
    analysis: RunAnalysis | None = None,
) -> str:
    """Render a stored run as one self-contained HTML page.

    Args:
        record: The run, as ``Store.load_run`` or ``read_results_file`` give it.
        prices: The price table that values what cached answers saved (default: the
            built-in table with the user's overrides).
        analysis: The run's temperature and role analysis, shown for a run with several
            temperatures or roles as the console report does (default:
            ``analyze_run(record)`` with the run's recorded threshold and aggregation).

    Returns:
        The page.
    """
    from markupsafe import Markup

    from qualspec.analysis import analyze_run, worth_analysing
    from qualspec.version import __version__

    if not worth_analysing(record):
        analysis = None
    elif analysis is None:
        analysis = analyze_run(record)
    view = build_view(record, prices=prices, analysis=analysis)
    style = "\n" + _read("report.css") + _role_css(len(view.roles)) + "\n"
    template = page_template("report.html.j2")
    context: dict[str, Any] = {
        "v": view,
        "style": Markup(style),
        "csp": csp_for(style),
        "version": __version__,
    }
    return template.render(context)


def write_html(
    record: RunRecord,
    path: str | os.PathLike[str],
    *,
    prices: PriceTable | None = None,
    analysis: RunAnalysis | None = None,
) -> None:
    """Write the HTML report of a run to ``path`` atomically (see :func:`render_html`).

    Example:
        >>> from qualspec.report import read_results_file, write_html
        >>> write_html(read_results_file("results/run.json"), "report.html")

    Raises:
        ResultsFileError: The disk or the operating system refused the write (an existing
            file is left untouched).
    """
    write_text_atomic(path, render_html(record, prices=prices, analysis=analysis))
