"""The HTML report of a large run (``qualspec run --html`` past the work items a run loads
whole): one self-contained page made from the run's page snapshot (its verdicts, the
overview per candidate, the most failed criteria and checks, the matrix), never from its
answers, so it is written in the memory of the snapshot whatever the run's size. Every
answer stays in ``qualspec serve`` and the results file.

Like :mod:`._html`: autoescaped, no script, nothing loaded, a strict Content-Security-Policy.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from qualspec.report._html import csp_for, page_template
from qualspec.report._results_file import write_text_atomic

if TYPE_CHECKING:
    from qualspec.store import RunSummary

__all__ = ["render_large_html", "write_large_html"]

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d232a;max-width:100rem}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}
th,td{border:1px solid #d5dbe1;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f1f4f7}.muted{color:#5b6670}.note{background:#f6f8fa;padding:.5rem}
td.pass{background:#e3f4e6}td.fail{background:#fbe3e1}td.error{background:#fdf0d5}
td.unscored,td.answered{background:#eef0f2}
"""


def render_large_html(summary: RunSummary, parts: Mapping[str, Any]) -> str:
    """The page of run ``summary`` from its snapshot's page parts (``parts``: what
    ``qualspec.web.run_page_parts`` gives)."""
    from markupsafe import Markup

    from qualspec.version import __version__

    style = _STYLE
    return page_template("large_report.html.j2").render(
        run=summary,
        parts=parts,
        matrix=parts["matrix"],
        style=Markup(style),
        csp=csp_for(style),
        version=__version__,
    )


def write_large_html(
    summary: RunSummary, parts: Mapping[str, Any], path: str | os.PathLike[str]
) -> None:
    """Write :func:`render_large_html`'s page to ``path`` atomically.

    Raises:
        ResultsFileError: The disk or the operating system refused the write.
    """
    write_text_atomic(path, render_large_html(summary, parts))
