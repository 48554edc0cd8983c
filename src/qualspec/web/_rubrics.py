"""Rubric session scores in the web app: the runs of ``qualspec rubrics judge``.

``judge_sessions`` stores its result in its run's metadata (``RUBRIC_RESULT_KEY``); the
list shows each judged session's per-rubric scores and weighted score, and a run's page is
the same offline HTML as ``qualspec rubrics judge --html`` (served with its own CSP).
"""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from qualspec.rubrics import RUBRIC_RESULT_KEY, RUBRIC_RUN_KIND, session_rank
from qualspec.web._api import load, state
from qualspec.web._pages import _env, render

__all__ = ["RubricRun", "api_router", "page_router"]

api_router = APIRouter(prefix="/api", tags=["rubrics"])
page_router = APIRouter(include_in_schema=False)
_SCAN_RUNS = 500
_CSP = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')


class RubricScore(BaseModel):
    """One rubric's score of a session (None: unscored, with the reason)."""

    rubric_id: str
    name: str
    score: float | None
    unscored_reason: str | None = None


class RubricSession(BaseModel):
    """A judged session."""

    session_id: str
    scores: list[RubricScore]
    weighted_score: float | None
    n_scored: int = Field(description="how many of the run's rubrics scored it")


class RubricRun(BaseModel):
    """A run of ``qualspec rubrics judge`` with its scores."""

    run_id: str
    started_at: str
    status: str
    model: str
    rubrics: list[dict[str, Any]]
    sessions: list[RubricSession]


def _rubric_run(summary: Any) -> RubricRun | None:
    result = summary.metadata.get(RUBRIC_RESULT_KEY)
    if summary.metadata.get("kind") != RUBRIC_RUN_KIND or not isinstance(result, dict):
        return None
    rubrics = [
        {"id": str(r.get("id")), "name": str(r.get("name")), "weight": r.get("weight", 1.0)}
        for r in result.get("rubrics", [])
        if isinstance(r, dict)
    ]
    sessions = []
    for entry in result.get("sessions", []):
        scores = [
            RubricScore(
                rubric_id=str(s.get("rubric_id")),
                name=str(s.get("name")),
                score=s.get("score"),
                unscored_reason=s.get("unscored_reason"),
            )
            for s in entry.get("scores", [])
        ]
        sessions.append(
            RubricSession(
                session_id=str(entry.get("session_id")),
                scores=scores,
                weighted_score=entry.get("weighted_score"),
                n_scored=sum(1 for s in scores if s.score is not None),
            )
        )
    sessions.sort(key=lambda s: session_rank(s.n_scored, len(rubrics), s.weighted_score))
    return RubricRun(
        run_id=summary.id,
        started_at=summary.started_at.isoformat(),
        status=summary.status,
        model=str(result.get("model", "?")),
        rubrics=rubrics,
        sessions=sessions,
    )


async def _rubric_runs(request: Request, limit: int) -> list[RubricRun]:
    session = await state(request).session()
    found = await asyncio.to_thread(session.store.list_runs, None, limit)
    return [r for r in map(_rubric_run, found) if r is not None]


@api_router.get("/rubrics", response_model=list[RubricRun])
async def rubric_runs(
    request: Request, limit: int = Query(_SCAN_RUNS, ge=1, le=5000)
) -> list[RubricRun]:
    """Runs of ``qualspec rubrics judge`` among the last ``limit`` runs, newest first, with
    each session's per-rubric scores (1-5), weighted score and how many rubrics scored it;
    sessions every rubric scored first, best first, then those only some scored."""
    return await _rubric_runs(request, limit)


@page_router.get("/rubrics", response_class=HTMLResponse)
async def rubrics_page(request: Request) -> HTMLResponse:
    """The judged sessions of each rubric run: per-rubric scores and the weighted score,
    sessions scored on every rubric first (see ``session_rank``)."""
    runs = await _rubric_runs(request, _SCAN_RUNS)
    return render("rubrics.html.j2", title="Rubric session scores", runs=runs, scanned=_SCAN_RUNS)


@page_router.get("/rubrics/{run_id}", response_class=HTMLResponse)
async def rubric_run_page(run_id: str, request: Request) -> HTMLResponse:
    """A rubric run as ``qualspec rubrics judge --html`` renders it."""
    from qualspec.report import render_sessions_html

    record = await load(request, run_id)
    result = record.summary.metadata.get(RUBRIC_RESULT_KEY)
    if not isinstance(result, dict):
        raise HTTPException(status_code=404, detail=f"run {run_id} holds no rubric scores")
    page = await asyncio.to_thread(render_sessions_html, result)
    found = _CSP.search(page)
    csp = html.unescape(found.group(1)) if found else "default-src 'none'"
    nav = _env().get_template("_nav.html.j2").render()
    page = page.replace('<header class="top">\n', f'<header class="top">\n{nav}', 1)
    return HTMLResponse(page, headers={"Content-Security-Policy": csp})
