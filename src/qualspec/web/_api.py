"""The JSON API: the Lab (whole, or streamed as server-sent events), runs, results, diff."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel

from qualspec.errors import QualspecError, UnknownRunError
from qualspec.lab import GenerateAnswerRequest, GenerateAnswerResponse, IterationData, run_lab
from qualspec.web._state import WebState

__all__ = ["RunRow", "router", "run_row"]

router = APIRouter(prefix="/api", tags=["api"])
log = logging.getLogger("qualspec.web")


class RunRow(BaseModel):
    """A run as the runs list shows it."""

    id: str
    suite_name: str
    status: str
    kind: str
    started_at: str
    finished_at: str | None
    n_responses: int
    n_judgments: int
    cost_usd: float | None


def state(request: Request) -> WebState:
    """The app's :class:`WebState`."""
    found: WebState = request.app.state.web
    return found


def run_row(summary: Any) -> RunRow:
    """A ``RunSummary`` as a :class:`RunRow`."""
    return RunRow(
        id=summary.id,
        suite_name=summary.suite_name,
        status=summary.status,
        kind=str(summary.metadata.get("kind") or "suite"),
        started_at=summary.started_at.isoformat(),
        finished_at=summary.finished_at.isoformat() if summary.finished_at else None,
        n_responses=summary.n_responses,
        n_judgments=summary.n_judgments,
        cost_usd=summary.cost_usd,
    )


@router.post("/generate-answer", response_model=GenerateAnswerResponse)
async def generate_answer(body: GenerateAnswerRequest, request: Request) -> Any:
    """Refine an answer until the evaluator scores it at least ``score_threshold``.

    Generation and evaluation are separate calls through the server's session, recorded in
    a run of their own (``metadata.run_id``). The best answer is returned, not the last.
    When the client disconnects first, the Lab is stopped (no further model call) and its
    run left ``interrupted``.
    """
    from qualspec.web._lab_requests import ClientGone, unless_disconnected
    from qualspec.web._lab_view import explain, explained

    web = state(request)
    await _check_models(body, web)
    session = await web.session()
    try:
        work = run_lab(session, body, providers=web.providers)
        return explained(await unless_disconnected(request, work), body)
    except ClientGone:
        return Response(status_code=499)  # nobody reads it
    except QualspecError as exc:
        raise HTTPException(status_code=400, detail=explain(str(exc), body)) from None


@router.post("/generate-answer/stream")
async def generate_answer_stream(
    body: GenerateAnswerRequest, request: Request
) -> StreamingResponse:
    """The same as ``/api/generate-answer``, streamed as server-sent events.

    Events: ``run`` (``{"run_id": ...}``) when the Lab's run is made, ``iteration`` (an
    :class:`IterationData`, with ``changes``: the word diff from the previous answer) as
    each iteration is evaluated, then ``result`` (a :class:`GenerateAnswerResponse`), or
    ``error`` (``{"detail": ...}``). Closing the stream (the page's Stop) stops the Lab:
    no further model call, its run left ``interrupted``.
    """
    from qualspec.web._lab_requests import unless_disconnected
    from qualspec.web._lab_view import explain, explained, iteration_event

    web = state(request)
    await _check_models(body, web)
    session = await web.session()
    queue: asyncio.Queue[tuple[str, str] | None] = asyncio.Queue()
    previous: list[IterationData] = []

    async def on_start(run_id: str) -> None:
        await queue.put(("run", json.dumps({"run_id": run_id})))

    async def on_iteration(iteration: IterationData) -> None:
        before = previous[-1] if previous else None
        await queue.put(
            (
                "iteration",
                json.dumps(iteration_event(iteration, before, body), separators=(",", ":")),
            )
        )
        if iteration.answer:
            previous.append(iteration)

    async def lab() -> None:
        try:
            result = await run_lab(
                session,
                body,
                on_iteration=on_iteration,
                providers=web.providers,
                on_start=on_start,
            )
            await queue.put(("result", explained(result, body).model_dump_json()))
        except QualspecError as exc:
            await queue.put(("error", json.dumps({"detail": explain(str(exc), body)})))
        except Exception as exc:  # the page must hear of it; the log gets the traceback
            log.exception("the Lab failed")
            detail = f"internal error: {type(exc).__name__}: {exc}"
            await queue.put(("error", json.dumps({"detail": detail})))
        finally:
            await queue.put(None)

    async def work() -> None:
        # the Lab stops when the client goes, whether or not an event is being written
        with contextlib.suppress(Exception):
            await unless_disconnected(request, lab())
        await queue.put(None)

    async def events() -> AsyncIterator[bytes]:
        task = asyncio.create_task(work())
        try:
            yield b": started\n\n"
            while (item := await queue.get()) is not None:
                name, data = item
                yield f"event: {name}\ndata: {data}\n\n".encode()
        finally:
            if not task.done():  # the client went away: stop paying for calls
                task.cancel()

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={"X-Accel-Buffering": "no"},
    )


async def _check_models(body: GenerateAnswerRequest, web: WebState) -> None:
    """400 before any run is made when the Lab could not call the request's models."""
    from qualspec.web._lab_requests import refusal
    from qualspec.web._lab_view import explain

    problem = await refusal(body, web)
    if problem is not None:
        raise HTTPException(status_code=400, detail=explain(problem, body))


@router.get("/runs", response_model=list[RunRow])
async def runs(request: Request, limit: int = Query(50, ge=1, le=1000)) -> list[RunRow]:
    """Recent runs, newest first."""
    session = await state(request).session()
    found = await asyncio.to_thread(session.store.list_runs, None, limit)
    return [run_row(s) for s in found]


@router.get("/runs/{run_id}")
async def run_results(run_id: str, request: Request) -> dict[str, Any]:
    """A run's results, as its results JSON file holds them (``qualspec runs export``)."""
    from qualspec.analysis import stored_analysis
    from qualspec.report import run_to_dict

    record = await load(request, run_id)
    session = await state(request).session()  # a finished run's analysis: computed once
    analysis = await asyncio.to_thread(stored_analysis, session.store, record)
    return run_to_dict(record, analysis=analysis)


@router.get("/diff")
async def diff(
    request: Request,
    a: str = Query(..., description="run A (before)"),
    b: str = Query(..., description="run B (after)"),
    noise: float = Query(0.5, ge=0, description="score changes within this are unchanged"),
) -> Any:
    """Compare run A with run B tuple by tuple (``qualspec diff --format json``)."""
    from qualspec.analysis import diff_runs, format_diff

    run_a, run_b = await load(request, a), await load(request, b)
    return json.loads(format_diff(diff_runs(run_a, run_b, noise=noise), "json"))


async def load(request: Request, run_id: str) -> Any:
    """A stored run, or 404."""
    session = await state(request).session()
    try:
        return await asyncio.to_thread(session.store.load_run, run_id)
    except UnknownRunError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
