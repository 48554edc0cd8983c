"""A run's page: overview, most failed criteria and checks, the matrix, and its answers
filtered, searched, sorted and in pages (:mod:`._explore`); the runs list's pass rates.

Every PASS/FAIL comes from :func:`qualspec.analysis.run_verdicts` (cells, candidate rows)
and :func:`qualspec.analysis.answer_verdict` (an answer). A finished run's index is built
once and kept (:func:`._explore.index_for`); a run in progress is read afresh each time.
The whole HTML report (analysis, charts, comparisons) stays at ``/runs/{id}/report``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from fastapi import HTTPException, Request

from qualspec.analysis import CellVerdict, RowKey, RowVerdict, format_temperature, run_verdicts
from qualspec.errors import UnknownRunError
from qualspec.store import RunRecord, RunSummary, Store
from qualspec.web._api import state
from qualspec.web._explore import NONE, SORTS, Query, RunIndex, index_for, score_text

__all__ = ["MATRIX_ROWS", "MatrixCell", "load_index", "matrix", "run_context", "run_stats"]

MATRIX_ROWS = 50  # candidate rows of the matrix per page


@dataclass(frozen=True, slots=True)
class MatrixCell:
    """A matrix cell (or a row's verdict), with the link to its answers."""

    text: str
    css: str
    title: str
    href: str


def _key(summary: RunSummary) -> tuple[Any, ...] | None:
    if summary.status == "running":
        return None
    return (summary.id, summary.status, summary.finished_at, summary.n_responses)


def _build(store: Store, run_id: str) -> RunIndex:
    record: RunRecord = store.load_run(run_id)
    ids = {v for r in record.responses for v in r.prompt_versions.values() if isinstance(v, int)}
    prompts: dict[int, str] = {}
    for version_id in sorted(ids):
        try:
            prompts[version_id] = store.get_prompt_by_id(version_id).text
        except Exception:  # noqa: BLE001 - a results file from another store: no prompt
            continue
    return RunIndex(record, run_verdicts(record), prompts)


async def load_index(request: Request, summary: RunSummary) -> RunIndex:
    """The run's index: kept for a finished run, read afresh for one in progress."""
    session = await state(request).session()
    store = session.store
    return await asyncio.to_thread(index_for, _key(summary), lambda: _build(store, summary.id))


async def load_summary(request: Request, run_id: str) -> RunSummary:
    """A run's summary, or 404."""
    session = await state(request).session()
    try:
        found: RunSummary = await asyncio.to_thread(session.store.get_run, run_id)
    except UnknownRunError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    return found


def _href(run_id: str, params: Mapping[str, str], anchor: str = "answers") -> str:
    query = urlencode(params)
    return f"/runs/{run_id}" + (f"?{query}" if query else "") + (f"#{anchor}" if anchor else "")


def _css(passed: bool | None, label: str) -> str:
    if passed is not None:
        return "pass" if passed else "fail"
    return {"ERROR": "error", "UNSCORED": "unscored"}.get(label, "answered")


def _cell_text(v: CellVerdict | RowVerdict) -> str:
    if v.score is not None:
        return f"{score_text(v.score, v.threshold, v.scale)} {v.label}"
    return v.label


def _where(key: RowKey) -> dict[str, str]:
    scenario, input_id, role, candidate = key
    return {
        "scenario": scenario,
        "input": input_id if input_id is not None else NONE,
        "role": role if role is not None else NONE,
        "candidate": candidate,
    }


def matrix(index: RunIndex, query: Query, page: int) -> dict[str, Any]:
    """The candidate rows (scenario, input, role, candidate) the filters keep, one cell
    per temperature and the row's verdict, each linking to its answers; in pages."""
    verdicts = index.verdicts
    temps: dict[str, Any] = {}
    for key in verdicts.cells:
        temps.setdefault(format_temperature(key[4]), key[4])
    if query.temperature:
        temps = {k: v for k, v in temps.items() if k == query.temperature}
    keep = []
    for key, row in verdicts.rows.items():
        where = _where(key)
        if any(getattr(query, n) and getattr(query, n) != where[n] for n in where):
            continue
        if query.failed and row.passed is not False:
            continue
        keep.append((key, row))
    pages = max(1, math.ceil(len(keep) / MATRIX_ROWS))
    page = min(max(1, page), pages)
    run_id = index.run.summary.id
    rows = []
    for key, row in keep[(page - 1) * MATRIX_ROWS : page * MATRIX_ROWS]:
        where = _where(key)
        cells = []
        for label, t in temps.items():
            cell = verdicts.cells.get((*key, t))
            if cell is None:
                cells.append(MatrixCell("", "empty", "", ""))
                continue
            title = f"{cell.runs} run{'s' if cell.runs != 1 else ''}"
            if cell.threshold is not None:
                title += f", passes at {cell.threshold:g}"
            if cell.reasons:
                title += "; FAIL: " + "; ".join(cell.reasons)
            href = _href(run_id, {**where, "temperature": label})
            cells.append(MatrixCell(_cell_text(cell), _css(cell.passed, cell.label), title, href))
        overall = MatrixCell(
            _cell_text(row),
            _css(row.passed, row.label),
            "; ".join(row.reasons),
            _href(run_id, where),
        )
        rows.append({"where": where, "cells": cells, "verdict": overall, "reasons": row.reasons})
    return {
        "temperatures": list(temps),
        "rows": rows,
        "matching": len(keep),
        "page": page,
        "pages": pages,
        "first": (page - 1) * MATRIX_ROWS + 1 if rows else 0,
        "last": (page - 1) * MATRIX_ROWS + len(rows),
    }


def run_stats(index: RunIndex) -> dict[str, Any]:
    """What the runs list shows of a run: cells passed of those with a verdict, and the
    mean of the cells' scores (on the run's main scale)."""
    passed, failed, _ = index.verdicts.count("cells")
    cells = [c for c in index.verdicts.cells.values() if c.score is not None]
    scale = 10 if any(c.scale == 10 for c in cells) or not cells else 100
    scores = [c.score for c in cells if c.scale == scale and c.score is not None]
    return {
        "passed": passed,
        "with_verdict": passed + failed,
        "rate": passed / (passed + failed) if passed + failed else None,
        "score": sum(scores) / len(scores) if scores else None,
        "scale": scale,
        "cells": len(scores),
    }


def _pages(run_id: str, query: Query, current: int, pages: int, name: str) -> list[Any]:
    """Links to the first, previous, next and last pages (and a few around)."""
    wanted = sorted({1, current - 2, current - 1, current, current + 1, current + 2, pages})
    out: list[Any] = []
    anchor = "answers" if name == "page" else "matrix"
    for n in (p for p in wanted if 1 <= p <= pages):
        out.append(
            (
                str(n),
                _href(run_id, query.params(**{name: n if n > 1 else None}), anchor),
                n == current,
            )
        )
    return out


def _money(x: float | None) -> str:
    return "unknown" if x is None else f"${x:.4f}"


def _percent(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _overview(index: RunIndex, run_id: str) -> list[dict[str, Any]]:
    out = []
    for c in index.candidates():
        rate = c["rate"]
        ci = c["rate_ci"]
        mean, mci = c["mean"], c["mean_ci"]
        out.append(
            {
                **c,
                "href": _href(run_id, {"candidate": c["candidate"]}),
                "failing_href": _href(run_id, {"candidate": c["candidate"], "failed": "1"}),
                "rate_text": _percent(rate),
                "rate_note": (
                    f"{c['passed']} of {c['cells']} cells"
                    + (f", 95% CI {_percent(ci[0])}-{_percent(ci[1])}" if ci else "")
                ),
                "mean_text": "-" if mean is None else f"{mean:.2f}/{c['scale']}",
                "mean_note": (
                    f"n {c['scored']}" + (f", 95% CI {mci[0]:.2f}-{mci[1]:.2f}" if mci else "")
                ),
                "sd_text": "-" if c["sd"] is None else f"{c['sd']:.2f}",
                "cost_text": _money(c["cost"]),
                "latency_text": (
                    "-"
                    if c["latency_median"] is None
                    else f"{c['latency_median']:.2f} s / {c['latency_p95']:.2f} s"
                ),
            }
        )
    return out


def _aspects(index: RunIndex, run_id: str) -> list[dict[str, Any]]:
    out = []
    for a in index.failing_aspects():
        where = {"check": a["criterion"]} if a["check"] else {"criterion": a["criterion"]}
        if not a["check"]:
            where["evaluator"] = a["evaluator"]
        out.append({**a, "href": _href(run_id, {**where, "failed": "1"})})
    return out


def run_context(index: RunIndex, params: Mapping[str, str]) -> dict[str, Any]:
    """Everything ``run.html.j2`` shows for ``params`` (the request's query string)."""
    query = Query.from_params(params)
    try:
        mpage = int(params.get("mpage", "1") or 1)
    except ValueError:
        mpage = 1
    run = index.run
    run_id = run.summary.id
    found = index.search(query)
    grid = matrix(index, query, mpage)
    stats = run_stats(index)
    shown = [
        {"a": a, "prompt": index.prompt_of(a), "where": _answer_where(a.record)}
        for a in found.answers
    ]
    return {
        "title": run.summary.suite_name,
        "run": run.summary,
        "stats": stats,
        "aggregation": index.verdicts.aggregation,
        "overview": _overview(index, run_id),
        "aspects": _aspects(index, run_id),
        "matrix": grid,
        "mpages": _pages(run_id, query, grid["page"], grid["pages"], "mpage"),
        "found": found,
        "answers": shown,
        "pages": _pages(run_id, query, found.page, found.pages, "page"),
        "query": query,
        "options": index.options(),
        "sorts": SORTS,
        "links": {"clear": f"/runs/{run_id}#answers"},
        "none": NONE,
    }


def _answer_where(r: Any) -> str:
    parts = [r.scenario]
    if r.input_id is not None:
        parts.append(f"input {r.input_id}")
    if r.role is not None:
        parts.append(f"role {r.role}")
    return " · ".join(parts)
