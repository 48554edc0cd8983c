"""Reference review in the web app: the JSON API and the pages.

The same store calls as ``qualspec reference``: the distinct reference answers with their
status (``Store.reference_answers``), one with its whole audit trail, a status change with
notes (``Store.set_reference_status``) and an override (``Store.override_reference``),
checked against the scenario's ``output_schema`` as the CLI checks it. "Who" is the
configured user (``$QUALSPEC_USER``, else the OS user) unless the request names one.
Changes are POST only (see ``_security``: a cross-site POST is refused).
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl, quote

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from qualspec.errors import UnknownReferenceError
from qualspec.store import GROUND_TRUTH_STATUSES, ReferenceAnswer, Store, reviewer, schema_problem
from qualspec.web._api import state
from qualspec.web._pages import render

__all__ = [
    "OverrideBody",
    "ReferenceDetail",
    "ReferenceRow",
    "StatusBody",
    "api_router",
    "page_router",
]

api_router = APIRouter(prefix="/api", tags=["references"])
page_router = APIRouter(include_in_schema=False)
Status = Literal["unvalidated", "validated", "needs_review", "disputed"]
_MAX_NOTES = 10_000
_MAX_WHO = 200


class AuditRow(BaseModel):
    """One change of a reference's review."""

    who: str
    at: str
    action: str
    before: str | None
    after: str | None
    notes: str | None


class ReferenceRow(BaseModel):
    """A reference answer as the list shows it."""

    id: str = Field(description="the call key (any unique prefix is accepted)")
    scenario: str
    input_id: str | None
    model: str
    status: str = Field(description="the status that applies to the answer now")
    overridden: bool
    notes: str | None
    latest_run: str
    runs: int
    created_at: str


class ReferenceDetail(ReferenceRow):
    """A reference answer with its texts and its whole audit trail."""

    text: str | None = Field(description="the model's answer")
    error: str | None
    override_text: str | None = Field(description="the answer a person wrote (graders use it)")
    human_validated_at: str | None
    output_schema: Any = None
    audit: list[AuditRow]


class StatusBody(BaseModel):
    """A status change."""

    model_config = ConfigDict(extra="forbid")
    status: Status
    notes: str | None = Field(None, max_length=_MAX_NOTES)
    who: str | None = Field(None, min_length=1, max_length=_MAX_WHO)


class OverrideBody(BaseModel):
    """An override: the corrected answer as JSON text (checked like ``reference override``)."""

    model_config = ConfigDict(extra="forbid")
    answer: str = Field(min_length=1, description="the corrected answer, JSON")
    notes: str | None = Field(None, max_length=_MAX_NOTES)
    who: str | None = Field(None, min_length=1, max_length=_MAX_WHO)


def _row(answer: ReferenceAnswer) -> dict[str, Any]:
    review = answer.review
    return {
        "id": answer.call_key,
        "scenario": answer.scenario,
        "input_id": answer.input_id,
        "model": f"{answer.provider}/{answer.model}",
        "status": answer.current_status(),
        "overridden": review.override_text is not None,
        "notes": review.validation_notes,
        "latest_run": answer.latest_run,
        "runs": answer.runs,
        "created_at": answer.created_at.isoformat(),
    }


def _detail(answer: ReferenceAnswer) -> ReferenceDetail:
    review = answer.review
    validated = review.human_validated_at
    return ReferenceDetail(
        **_row(answer),
        text=answer.text,
        error=answer.error,
        override_text=review.override_text,
        human_validated_at=validated.isoformat() if validated else None,
        output_schema=answer.output_schema,
        audit=[
            AuditRow(
                who=e.who,
                at=e.when.isoformat(),
                action=e.action,
                before=e.before,
                after=e.after,
                notes=e.notes,
            )
            for e in review.audit
        ],
    )


async def _store(request: Request) -> Store:
    session = await state(request).session()
    return session.store


def _answer(store: Store, ident: str) -> ReferenceAnswer:
    """The reference named by ``ident`` (a call key or a unique prefix); 404 otherwise."""
    try:
        key = store.find_reference(ident)
    except UnknownReferenceError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    found = store.reference_answers(call_keys=[key])
    if not found:
        raise HTTPException(status_code=404, detail=f"no reference answer with id '{ident}'")
    return found[0]


def _unprocessable(field: str, message: str) -> HTTPException:
    """A 422 shaped as FastAPI's own: ``detail[0].loc`` names the field."""
    return HTTPException(
        status_code=422,
        detail=[{"loc": ["body", field], "msg": message, "type": "value_error"}],
    )


def override_problem(answer: ReferenceAnswer, text: str) -> str | None:
    """Why ``text`` cannot override ``answer`` (not JSON, or not its output_schema), or None."""
    if not text.strip():
        return "the answer is empty: write the corrected answer as JSON"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno} column {exc.colno}: not JSON ({exc.msg})"
    if answer.output_schema is not None:
        problem = schema_problem(value, answer.output_schema)
        if problem is not None:
            return f"does not match the output_schema of scenario '{answer.scenario}': {problem}"
    return None


@api_router.get("/references", response_model=list[ReferenceRow])
async def list_references(
    request: Request,
    status: Annotated[Status | None, Query(description="only references with this status")] = None,
    run: Annotated[str | None, Query(description="only those this run used")] = None,
) -> list[ReferenceRow]:
    """The distinct reference answers, newest first, with their status (as ``reference list``)."""
    store = await _store(request)
    found = await asyncio.to_thread(store.reference_answers, status, run)
    return [ReferenceRow(**_row(a)) for a in found]


@api_router.get("/references/{ref_id}", response_model=ReferenceDetail)
async def get_reference(ref_id: str, request: Request) -> ReferenceDetail:
    """One reference answer: the model's answer, the override, status, notes, audit trail."""
    store = await _store(request)
    return _detail(await asyncio.to_thread(_answer, store, ref_id))


@api_router.post("/references/{ref_id}/status", response_model=ReferenceDetail)
async def set_status(ref_id: str, body: StatusBody, request: Request) -> ReferenceDetail:
    """Mark a reference validated, disputed, needs_review (or unvalidated), with notes."""
    store = await _store(request)

    def change() -> ReferenceDetail:
        answer = _answer(store, ref_id)
        store.set_reference_status(answer.call_key, body.status, body.notes, body.who or reviewer())
        return _detail(_answer(store, answer.call_key))

    return await asyncio.to_thread(change)


@api_router.post("/references/{ref_id}/override", response_model=ReferenceDetail)
async def override(ref_id: str, body: OverrideBody, request: Request) -> ReferenceDetail:
    """Replace a reference answer by a person's (JSON fitting the scenario's output_schema):
    graders grade against it from now on, and it is validated."""
    store = await _store(request)

    def change() -> ReferenceDetail:
        answer = _answer(store, ref_id)
        problem = override_problem(answer, body.answer)
        if problem is not None:
            raise _unprocessable("answer", problem)
        text = body.answer.strip()
        store.override_reference(answer.call_key, text, body.notes, body.who or reviewer())
        return _detail(_answer(store, answer.call_key))

    return await asyncio.to_thread(change)


# pages


@page_router.get("/references", response_class=HTMLResponse)
async def references_page(request: Request) -> HTMLResponse:
    """The reference answers with their status; each links to its review page."""
    store = await _store(request)
    wanted = request.query_params.get("status") or None
    if wanted is not None and wanted not in GROUND_TRUTH_STATUSES:
        wanted = None
    found = await asyncio.to_thread(store.reference_answers, wanted)
    return render(
        "references.html.j2",
        title="Reference answers",
        refs=[_row(a) for a in found],
        statuses=GROUND_TRUTH_STATUSES,
        wanted=wanted,
    )


async def _review_page(
    request: Request,
    ref_id: str,
    *,
    error: str | None = None,
    draft: str | None = None,
    notes: str = "",
    status_code: int = 200,
) -> HTMLResponse:
    from qualspec.web._review import review_context

    store = await _store(request)
    answer = await asyncio.to_thread(_answer, store, ref_id)
    detail = _detail(answer)
    shown = await asyncio.to_thread(review_context, store, answer, dict(request.query_params))
    return render(
        "reference.html.j2",
        **shown,
        status_code=status_code,
        title=f"Reference {detail.id[:12]}",
        ref=detail,
        error=error,
        draft=draft
        if draft is not None
        else (
            shown["pretty_override"]
            or detail.override_text
            or shown["pretty_text"]
            or detail.text
            or ""
        ),
        notes=notes,
        statuses=[s for s in GROUND_TRUTH_STATUSES if s != "unvalidated"],
        who=reviewer(),
        max_notes=_MAX_NOTES,
        max_who=_MAX_WHO,
    )


@page_router.get("/references/{ref_id}", response_class=HTMLResponse)
async def reference_page(ref_id: str, request: Request) -> HTMLResponse:
    """A reference: the answer (the override marked), status, notes, the audit trail, and
    the forms that review it."""
    return await _review_page(request, ref_id)


async def _form(request: Request) -> dict[str, str]:
    return dict(parse_qsl((await request.body()).decode("utf-8", "replace")))


def _too_long(fields: dict[str, str]) -> str | None:
    """Why a form's notes or name cannot be saved (the API's caps), or None."""
    for field, cap in (("notes", _MAX_NOTES), ("who", _MAX_WHO)):
        if len(fields.get(field, "")) > cap:
            return f"{field}: at most {cap} characters, got {len(fields[field])}"
    return None


def _back(ref_id: str) -> RedirectResponse:
    return RedirectResponse(f"/references/{quote(ref_id, safe='')}", status_code=303)


@page_router.post("/references/{ref_id}/status", response_class=HTMLResponse)
async def status_submit(ref_id: str, request: Request) -> Response:
    """The status form: a change, then back to the reference (POST, redirect, GET)."""
    fields = await _form(request)
    status, notes = fields.get("status", ""), fields.get("notes", "").strip() or None
    error = _too_long(fields)
    if status not in GROUND_TRUTH_STATUSES:
        error = f"status: use one of {', '.join(GROUND_TRUTH_STATUSES)}, not {status!r}"
    if error is not None:
        draft = fields.get("notes", "")[:_MAX_NOTES]
        return await _review_page(request, ref_id, error=error, notes=draft, status_code=422)
    who = fields.get("who", "").strip() or reviewer()
    store = await _store(request)

    def change() -> str:
        key = _answer(store, ref_id).call_key
        store.set_reference_status(key, status, notes, who)
        return key

    return _back(await asyncio.to_thread(change))


@page_router.post("/references/{ref_id}/override", response_class=HTMLResponse)
async def override_submit(ref_id: str, request: Request) -> Response:
    """The override form: a checked JSON answer, or the page again with the error."""
    fields = await _form(request)
    text, notes = fields.get("answer", ""), fields.get("notes", "").strip() or None
    who = fields.get("who", "").strip() or reviewer()
    store = await _store(request)
    answer = await asyncio.to_thread(_answer, store, ref_id)
    problem = _too_long(fields)
    if problem is None and (why := override_problem(answer, text)) is not None:
        problem = f"answer: {why}"
    if problem is not None:
        return await _review_page(
            request,
            ref_id,
            error=problem,
            draft=text,
            notes=(notes or "")[:_MAX_NOTES],
            status_code=422,
        )
    await asyncio.to_thread(store.override_reference, answer.call_key, text.strip(), notes, who)
    return _back(answer.call_key)
