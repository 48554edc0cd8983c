"""The HTML page of sessions judged by rubric (``qualspec rubrics judge --html``).

The same approach as the run report (:mod:`._html`): jinja2 with autoescaping (every
session id, rubric text and reasoning is escaped), the report's stylesheet allowed by its
hash in a Content-Security-Policy that forbids everything else, no script.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from qualspec.report._html import _read, csp_for, page_template
from qualspec.report._results_file import write_text_atomic
from qualspec.rubrics import session_rank

__all__ = ["render_sessions_html", "write_sessions_html"]


def _number(value: Any) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _session_view(session: Mapping[str, Any], rubric_ids: list[str]) -> dict[str, Any]:
    by_id = {s.get("rubric_id"): s for s in session.get("scores", [])}
    cells = []
    for rid in rubric_ids:
        score = by_id.get(rid, {})
        cells.append(
            {
                "text": _number(score.get("score")),
                "title": score.get("reasoning") or score.get("unscored_reason") or "",
            }
        )
    details = [
        {
            "name": s.get("name", s.get("rubric_id")),
            "text": _number(s.get("score")),
            "reasoning": s.get("reasoning"),
            "unscored": s.get("unscored_reason") if s.get("score") is None else None,
        }
        for s in session.get("scores", [])
    ]
    metrics = session.get("metrics") or {}
    scored = sum(1 for rid in rubric_ids if by_id.get(rid, {}).get("score") is not None)
    return {
        "session_id": session.get("session_id", "?"),
        "scored": scored,
        "partial": 0 < scored < len(rubric_ids),
        "rank": session_rank(scored, len(rubric_ids), session.get("weighted_score")),
        "cut": bool(session.get("cut")),
        "cells": cells,
        "details": details,
        "weighted": _number(session.get("weighted_score")),
        "turns": _number(metrics.get("turns")),
        "tokens": _number(metrics.get("tokens")),
        "growth": _number(metrics.get("code_growth")),
    }


def render_sessions_html(results: Mapping[str, Any]) -> str:
    """Render the result of judging sessions (``judge_sessions``) as one offline page.

    Sessions every rubric scored come first, best weighted score first; a session only
    some rubrics scored follows, its coverage marked (``rubrics.session_rank``)."""
    from markupsafe import Markup

    from qualspec.version import __version__

    rubrics = list(results.get("rubrics", []))
    ids = [str(r.get("id")) for r in rubrics]
    style = "\n" + _read("report.css") + "\n"
    template = page_template("sessions.html.j2")
    return template.render(
        {
            "model": results.get("model", "?"),
            "rubrics": [
                {
                    "id": r.get("id"),
                    "name": r.get("name"),
                    "description": r.get("description"),
                    "scoring_criteria": r.get("scoring_criteria"),
                    "weight": _number(r.get("weight", 1.0)),
                }
                for r in rubrics
            ],
            "sessions": sorted(
                (_session_view(s, ids) for s in results.get("sessions", [])),
                key=lambda view: view["rank"],
            ),
            "style": Markup(style),
            "csp": csp_for(style),
            "version": __version__,
        }
    )


def write_sessions_html(results: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Write :func:`render_sessions_html` to ``path`` atomically."""
    write_text_atomic(path, render_sessions_html(results))
