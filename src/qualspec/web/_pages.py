"""The pages: runs, run detail (the HTML report), diff, the Lab, API docs (references:
``_references``; rubric scores: ``_rubrics``).

Rendered on the server by jinja2 with autoescaping on; styles and the Lab's one script
are files served from ``/static``, so the pages load nothing from anywhere else and
work offline. A run's detail page is the HTML report itself (``qualspec report``), served
with the report's own Content-Security-Policy (no script at all).
"""

from __future__ import annotations

import asyncio
import html
import re
from functools import lru_cache
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from qualspec.errors import QualspecError, StoreError, UnknownRunError
from qualspec.lab import (
    DEFAULT_ITER_MAX,
    DEFAULT_MODEL,
    DEFAULT_THRESHOLD,
    LAB_SUITE,
    GenerateAnswerRequest,
    run_lab,
)
from qualspec.store import RunSummary
from qualspec.web._api import load, run_row, state
from qualspec.web._compress import page_key
from qualspec.web._lab_requests import ClientGone, refusal, unless_disconnected

__all__ = ["render", "router"]

router = APIRouter(include_in_schema=False)
_STATIC = {
    "web.css": ("qualspec.web", "static/web.css", "text/css"),
    "lab.js": ("qualspec.web", "static/lab.js", "text/javascript"),
    "report.css": ("qualspec.report", "templates/report.css", "text/css"),
    "favicon.svg": ("qualspec.web", "static/favicon.svg", "image/svg+xml"),
}
_REPORT_CSP = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')


@lru_cache(maxsize=1)
def _env() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("qualspec.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """A page from ``templates/<name>``."""
    return HTMLResponse(_env().get_template(name).render(**context), status_code=status_code)


@lru_cache(maxsize=8)
def _static(name: str) -> tuple[bytes, str]:
    package, path, media = _STATIC[name]
    return resources.files(package).joinpath(path).read_bytes(), media


@router.get("/static/{name}")
async def static(name: str) -> Response:
    """The stylesheets and the Lab's script."""
    if name not in _STATIC:
        raise HTTPException(status_code=404, detail="no such file")
    body, media = _static(name)
    return Response(body, media_type=media)


@router.get("/favicon.ico")
async def favicon() -> Response:
    """The icon browsers ask for on their own (an SVG: every page links it as its icon)."""
    body, media = _static("favicon.svg")
    return Response(body, media_type=media, headers={"cache-control": "max-age=86400"})


@router.get("/")
async def home() -> RedirectResponse:
    """The runs list."""
    return RedirectResponse("/runs", status_code=303)


@router.get("/login")
async def login() -> RedirectResponse:
    """``/login?token=T`` is answered by the guard; without a token there is nothing to do."""
    return RedirectResponse("/runs", status_code=303)


async def _rows(request: Request, limit: int = 200, *, lab: bool = True) -> list[Any]:
    session = await state(request).session()
    hidden = None if lab else LAB_SUITE
    found = await asyncio.to_thread(session.store.list_runs, None, limit, exclude_suite=hidden)
    return [run_row(s) for s in found]


@router.get("/runs", response_class=HTMLResponse)
async def runs_page(request: Request) -> HTMLResponse:
    """Recent runs, newest first, with their pass rate and score, and a picker for the
    diff; the Lab's runs only with ``?lab=1`` (every Lab request is a run of its own: they
    would push suite runs out)."""
    from qualspec.web._run_page import list_stats

    lab = request.query_params.get("lab") == "1"
    session = await state(request).session()
    hidden = None if lab else LAB_SUITE
    found = await asyncio.to_thread(session.store.list_runs, None, 200, exclude_suite=hidden)
    stats = await asyncio.to_thread(list_stats, session.store, found)
    rows = [run_row(s) for s in found]
    from qualspec.web._compare import picker

    pick = picker(rows, None, None, False)  # the newest run and its suite's run before it
    return render(
        "runs.html.j2",
        title="Runs",
        runs=rows,
        stats=stats,
        lab=lab,
        pick_a=pick["pick_a"],
        pick_b=pick["pick_b"],
    )


async def _load_summary(request: Request, run_id: str) -> RunSummary:
    """A run's summary, or 404."""
    from qualspec.web._view_cache import run_summary

    session = await state(request).session()
    views = request.app.state.views
    try:
        found: RunSummary = await asyncio.to_thread(run_summary, session.store, run_id, views)
    except UnknownRunError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    return found


@router.get("/runs/{run_id}", response_class=HTMLResponse)
async def run_page(run_id: str, request: Request) -> Response:
    """A run: a Lab run's iterations, or any other run explored (``_run_page``) from its
    snapshot (``_view_cache``); a finished run's page rendered once per URL."""
    summary = await _load_summary(request, run_id)
    if summary.metadata.get("kind") == "rubric_judgments":
        return RedirectResponse(f"/rubrics/{summary.id}", status_code=303)
    lab = summary.metadata.get("lab")
    if summary.metadata.get("kind") == "lab" and isinstance(lab, dict):
        from qualspec.lab import GenerateAnswerResponse
        from qualspec.web._lab_view import page_context, stored_request

        stored = lab.get("result")
        result = GenerateAnswerResponse.model_validate(stored) if stored else None
        extra = page_context(result, stored_request(lab), lab.get("iterations"))
        return render(
            "lab_run.html.j2",
            title=f"Lab run {summary.id}",
            run=summary,
            lab=lab,
            result=result,
            **extra,
        )
    from qualspec.web._view_cache import view_key

    session = await state(request).session()
    store, pages = session.store, request.app.state.pages
    key = await asyncio.to_thread(view_key, store, summary)
    url = f"{request.url.path}?{request.url.query}"
    if key is not None:
        kept = pages.response(f"{key}|{url}", request.headers.get("accept-encoding", ""))
        if kept is not None:
            return kept  # type: ignore[no-any-return]
    views = request.app.state.views
    params = dict(request.query_params)
    context = await asyncio.to_thread(_explore, store, summary, params, key, views)
    page = render("run.html.j2", **context)
    if key is not None:
        await asyncio.to_thread(pages.put, f"{key}|{url}", bytes(page.body).decode("utf-8"), {})
    return page


def _explore(
    store: Any, summary: Any, params: dict[str, str], key: str | None, views: Any
) -> dict[str, Any]:
    """The run page's context from the run's snapshot (``key``: its key, None for a run in
    progress; ``views``: the app's snapshots in memory), built again once if the run
    changed under it."""
    from qualspec.web._run_page import run_context
    from qualspec.web._snapshot import StaleView
    from qualspec.web._view_cache import load_view

    view = load_view(store, summary, views, key=key)
    try:
        return run_context(view, summary, store, params)
    except StaleView:
        view = load_view(store, summary, views, fresh=True)
        return run_context(view, summary, store, params)


@router.get("/runs/{run_id}/report", response_class=HTMLResponse)
async def run_report(run_id: str, request: Request) -> Response:
    """A run's whole HTML report (``qualspec report --html``), with its own CSP; a finished
    run's rendered once (see qualspec.web._compress)."""
    pages = request.app.state.pages
    session = await state(request).session()
    try:
        known = await asyncio.to_thread(session.store.get_run, run_id)
        key = page_key(known, f"{request.url.path}?{request.url.query}")
    except StoreError:
        key = None  # unknown: load answers 404
    kept = pages.response(key, request.headers.get("accept-encoding", "")) if key else None
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    record = await load(request, run_id)
    from qualspec.analysis import stored_analysis, worth_analysing
    from qualspec.report import render_html

    analysis = None
    if worth_analysing(record):  # computed once per finished run, kept in the store
        analysis = await asyncio.to_thread(stored_analysis, session.store, record)
    page = await asyncio.to_thread(render_html, record, analysis=analysis)
    found = _REPORT_CSP.search(page)
    csp = html.unescape(found.group(1)) if found else "default-src 'none'"
    back = (
        f'<main>\n<p class="sub"><a href="/runs">&larr; all runs</a> · '
        f'<a href="/runs/{html.escape(record.summary.id)}">explore this run</a> · '
        '<a href="/lab">Lab</a></p>\n'
    )
    page = page.replace("<main>\n", back, 1)
    if key is not None:
        await asyncio.to_thread(pages.put, key, page, {"Content-Security-Policy": csp})
    return HTMLResponse(page, headers={"Content-Security-Policy": csp})


@router.get("/diff", response_class=HTMLResponse)
async def diff_page(request: Request) -> HTMLResponse:
    """Two runs side by side, tuple by tuple (``_compare``); the picker offers the runs of
    the first run's suite unless ``all=1``."""
    from qualspec.analysis import diff_runs
    from qualspec.web._compare import compare_context, picker

    rows = await _rows(request, lab=False)  # Lab runs only when named
    params = request.query_params
    a, b = params.get("a"), params.get("b")
    noise_text = params.get("noise", "0.5")
    context: dict[str, Any] = {"title": "Diff", "a": a, "b": b, "diff": None}
    context.update(noise=noise_text, error=None)
    every = params.get("all") == "1"
    if not (a and b):
        context.update(picker(rows, a, b, every))
        return render("diff.html.j2", **context)
    try:
        noise = float(noise_text)
        if not noise >= 0:
            raise ValueError(noise_text)
    except ValueError:
        context.update(picker(rows, a, b, every))
        context["error"] = f"noise: expected a number of points, 0 or more, got {noise_text[:40]!r}"
        return render("diff.html.j2", status_code=422, **context)
    run_a, run_b = await load(request, a), await load(request, b)
    listed = {r.id for r in rows}
    named = {r.summary.id: r.summary for r in (run_a, run_b)}  # older than the list, or Lab
    rows += [run_row(s) for i, s in named.items() if i not in listed]
    context.update(picker(rows, a, b, every))
    diff = await asyncio.to_thread(diff_runs, run_a, run_b, noise=noise)
    context["diff"] = diff
    context.update(await asyncio.to_thread(compare_context, run_a, run_b, diff, dict(params)))
    return render("diff.html.j2", **context)


def _lab_defaults() -> dict[str, Any]:
    return {"iter_max": DEFAULT_ITER_MAX, "threshold": DEFAULT_THRESHOLD, "model": DEFAULT_MODEL}


@router.get("/lab", response_class=HTMLResponse)
async def lab_page() -> HTMLResponse:
    """The Lab's form; the page's script streams the iterations in as they finish."""
    return _lab_form(None)


def _lab_form(
    status: str | None,
    status_code: int = 200,
    *,
    error: bool = False,
    result: Any = None,
    lab: GenerateAnswerRequest | None = None,
) -> HTMLResponse:
    """The Lab's page: the form, then the status (an error stands out), the best answer,
    the score trend and the iterations with their changes."""
    from qualspec.web._lab_view import page_context

    return render(
        "lab.html.j2",
        status_code=status_code,
        title="Lab",
        defaults=_lab_defaults(),
        result=result,
        status=status,
        error=error,
        **page_context(result, lab),
    )


@router.post("/lab", response_class=HTMLResponse)
async def lab_submit(request: Request) -> HTMLResponse:
    """The Lab without script: the form posted, the whole result rendered at the end."""
    fields = dict(parse_qsl((await request.body()).decode("utf-8", "replace")))
    for key in ("model", "judge_model"):
        if not fields.get(key, "").strip():
            fields.pop(key, None)
    try:
        for key, kind in (("iter_max", int), ("score_threshold", float)):
            if key in fields:
                fields[key] = kind(fields[key])  # type: ignore[assignment]
        lab = GenerateAnswerRequest.model_validate(fields)
    except (ValueError, ValidationError) as exc:
        why = exc.errors()[0] if isinstance(exc, ValidationError) else {"loc": (), "msg": str(exc)}
        where = ".".join(str(p) for p in why["loc"]) or "form"
        return _lab_form(f"Error: {where}: {why['msg']}", 422, error=True)
    from qualspec.web._lab_view import explain, explained

    web = state(request)
    problem = await refusal(lab, web)
    if problem is not None:
        return _lab_form(f"Error: {explain(problem, lab)}", 400, error=True)
    work = run_lab(await web.session(), lab, providers=web.providers)
    try:
        result = await unless_disconnected(request, work)
    except ClientGone:
        return HTMLResponse("", status_code=499)  # nobody reads it
    except QualspecError as exc:
        return _lab_form(f"Error: {explain(str(exc), lab)}", 400, error=True)
    return _lab_form("Done.", result=explained(result, lab), lab=lab)


@router.get("/docs", response_class=HTMLResponse)
async def docs_page(request: Request) -> HTMLResponse:
    """The API's OpenAPI description as a page (no CDN: nothing but this server)."""
    spec = request.app.openapi()
    endpoints = []
    for path, ops in spec.get("paths", {}).items():
        for method, op in ops.items():
            ref = op.get("requestBody", {}).get("content", {}).get("application/json", {})
            endpoints.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "summary": op.get("summary", ""),
                    "description": op.get("description", ""),
                    "params": [
                        {
                            "name": p.get("name", ""),
                            "where": p.get("in", ""),
                            "required": p.get("required", False),
                            "description": p.get("description", ""),
                        }
                        for p in op.get("parameters", [])
                    ],
                    "body": str(ref.get("schema", {}).get("$ref", "")).rsplit("/", 1)[-1],
                }
            )
    schemas = [
        {
            "name": name,
            "fields": [
                {
                    "name": field,
                    "type": _type_of(prop),
                    "required": field in schema.get("required", []),
                    "description": prop.get("description", ""),
                }
                for field, prop in schema.get("properties", {}).items()
            ],
        }
        for name, schema in spec.get("components", {}).get("schemas", {}).items()
    ]
    return render(
        "docs.html.j2",
        title="API",
        version=spec.get("openapi", ""),
        endpoints=endpoints,
        schemas=schemas,
    )


def _type_of(prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in prop:
        return " | ".join(_type_of(p) for p in prop["anyOf"])
    kind = str(prop.get("type", "any"))
    if kind == "array":
        kind = f"array of {_type_of(prop.get('items', {}))}"
    if "minimum" in prop:
        kind += f" ≥ {prop['minimum']}"
    if "maximum" in prop:
        kind += f" ≤ {prop['maximum']}"
    return kind
