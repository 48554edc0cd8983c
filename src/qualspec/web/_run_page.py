"""A run's page: overview, most failed criteria and checks, the matrix, and its answers
filtered, searched, sorted and in pages; the runs list's pass rates.

Every PASS/FAIL comes from :func:`qualspec.analysis.run_verdicts` (cells, candidate rows)
and :func:`qualspec.analysis.answer_verdict` (an answer). What no query changes (the
overview, the most failed aspects, the matrix's rows, the filters' options) is made once
per run by :func:`page_parts` into the run's snapshot (``_snapshot``, kept by
``_view_cache``); :func:`run_context` adds what the query asks for, reading only the
page's answers from the store. The whole HTML report (analysis, charts, comparisons)
stays at ``/runs/{id}/report``.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from qualspec.analysis import (
    CellKey,
    CellVerdict,
    RowKey,
    RowVerdict,
    RunVerdicts,
    format_temperature,
    run_verdicts,
)
from qualspec.store import RunSummary, Store
from qualspec.web._explore import NONE, SORTS, Query, score_text
from qualspec.web._labels import people_labels
from qualspec.web._overview import Tally
from qualspec.web._query_string import query_of
from qualspec.web._snapshot import RunView

__all__ = [
    "LIST_BUDGET",
    "MATRIX_ROWS",
    "MatrixCell",
    "cell_stats",
    "facts",
    "keep_stats",
    "list_stats",
    "matrix_parts",
    "matrix_row",
    "page_parts",
    "run_context",
    "stats_key",
    "verdict_stats",
]

MATRIX_ROWS = 50  # candidate rows of the matrix per page


@dataclass(frozen=True, slots=True)
class MatrixCell:
    """A matrix cell (or a row's verdict), with the link to its answers."""

    text: str
    css: str
    title: str
    href: str


def stats_key(summary: RunSummary) -> tuple[Any, ...] | None:
    """The key a finished run's list stats are kept under (None: a run in progress)."""
    if summary.status == "running":
        return None
    counts = (summary.n_responses, summary.n_judgments)
    return (summary.id, summary.status, summary.finished_at, *counts)


_STATS: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
_LOCK = threading.Lock()
_KEEP_STATS = 2000
LIST_BUDGET = 50_000
"""Answers and judgments the runs list reads per view to give runs their pass rate (runs
beyond it show theirs once opened, or on a later view)."""


def keep_stats(key: tuple[Any, ...], stats: dict[str, Any]) -> None:
    """Keep a finished run's :func:`run_stats` for the runs list."""
    with _LOCK:
        _STATS[key] = stats
        _STATS.move_to_end(key)
        while len(_STATS) > _KEEP_STATS:
            _STATS.popitem(last=False)


def _kept_stats(key: tuple[Any, ...] | None) -> dict[str, Any] | None:
    if key is None:
        return None
    with _LOCK:
        return _STATS.get(key)


def list_stats(store: Store, summaries: list[RunSummary]) -> dict[str, dict[str, Any] | None]:
    """Run id -> :func:`run_stats` for the runs list (None: not computed in this view's
    budget, :data:`LIST_BUDGET`; a Lab or rubric run has none). Finished runs' are kept."""
    out: dict[str, dict[str, Any] | None] = {}
    budget = LIST_BUDGET
    for s in summaries:
        key = stats_key(s)
        if s.metadata.get("kind") in ("lab", "rubric_judgments"):
            out[s.id] = None
            continue
        kept = _kept_stats(key)
        if kept is not None:
            out[s.id] = kept
            continue
        cost = s.n_responses + s.n_judgments
        if cost > budget:
            out[s.id] = None
            continue
        budget -= cost
        record = store.load_run(s.id)
        stats = verdict_stats(run_verdicts(record))
        if key is not None:
            keep_stats(key, stats)
        out[s.id] = stats
    return out


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


def matrix_row(
    key: RowKey, row: RowVerdict, cells: list[tuple[CellKey, CellVerdict]]
) -> dict[str, Any]:
    """One candidate row of the matrix (scenario, input, role, candidate) with its verdict
    and its cells' by temperature label (JSON-ready; :func:`matrix_parts` lays them out)."""
    by_label: dict[str, list[str]] = {}
    for cell_key, cell in cells:
        title = f"{cell.runs} run{'s' if cell.runs != 1 else ''}"
        if cell.threshold is not None:
            title += f", passes at {cell.threshold:g}"
        if cell.reasons:
            title += "; FAIL: " + "; ".join(cell.reasons)
        by_label[format_temperature(cell_key[4])] = [
            _cell_text(cell),
            _css(cell.passed, cell.label),
            title,
        ]
    where = _where(key)
    return {
        "where": where,
        "q": query_of(where),  # the query string of its answers
        "passed": row.passed,
        "label": row.label,
        "reasons": list(row.reasons),
        "verdict": [_cell_text(row), _css(row.passed, row.label), "; ".join(row.reasons)],
        "cells": by_label,
    }


def matrix_parts(
    rows: list[dict[str, Any]], temperatures: list[str], *, has_input: bool, has_role: bool
) -> dict[str, Any]:
    """The matrix's candidate rows (:func:`matrix_row`'s), one cell per temperature of
    ``temperatures`` (None where a row has none), JSON-ready: kept in the run's snapshot."""
    for row in rows:
        cells = row["cells"]
        row["cells"] = [cells.get(t) for t in temperatures]
    return {
        "has_input": has_input,
        "has_role": has_role,
        "temperatures": temperatures,
        "rows": rows,
    }


def matrix(parts: Mapping[str, Any], run_id: str, query: Query, page: int) -> dict[str, Any]:
    """The candidate rows the filters keep (``parts``: :func:`matrix_rows`'), one cell per
    temperature and the row's verdict, each linking to its answers; in pages."""
    labels: list[str] = list(parts["temperatures"])
    shown = [i for i, t in enumerate(labels) if not query.temperature or t == query.temperature]
    wanted = [
        (name, value)
        for name, value in (
            ("scenario", query.scenario),
            ("input", query.input),
            ("role", query.role),
            ("candidate", query.candidate),
        )
        if value
    ]
    keep = parts["rows"]
    if wanted or query.failed:
        keep = [
            row
            for row in keep
            if all(row["where"][name] == value for name, value in wanted)
            and (not query.failed or row["passed"] is False)
        ]
    pages = max(1, math.ceil(len(keep) / MATRIX_ROWS))
    page = min(max(1, page), pages)
    rows = []
    at = {i: urlencode({"temperature": labels[i]}) for i in shown}
    for row in keep[(page - 1) * MATRIX_ROWS : page * MATRIX_ROWS]:
        base = f"/runs/{run_id}?{row['q']}"
        cells = []
        for i in shown:
            cell = row["cells"][i]
            if cell is None:
                cells.append(MatrixCell("", "empty", "", ""))
                continue
            href = f"{base}&{at[i]}#answers"
            cells.append(MatrixCell(cell[0], cell[1], cell[2], href))
        text, css, title = row["verdict"]
        rows.append(
            {
                "where": row["where"],
                "cells": cells,
                "verdict": MatrixCell(text, css, title, f"{base}#answers"),
                "label": row["label"],
                "reasons": row["reasons"],
            }
        )
    return {
        "has_input": parts["has_input"],
        "has_role": parts["has_role"],
        "temperatures": [labels[i] for i in shown],
        "rows": rows,
        "matching": len(keep),
        "left_out": int(parts.get("left_out", 0)),
        "kept": len(parts["rows"]),
        "page": page,
        "pages": pages,
        "first": (page - 1) * MATRIX_ROWS + 1 if rows else 0,
        "last": (page - 1) * MATRIX_ROWS + len(rows),
    }


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def facts(
    summary: RunSummary,
    answers: int,
    aggregation: str,
    cells: tuple[int, int, int],
    rows: tuple[int, int, int],
    candidates: Mapping[str, tuple[int, int, int]],
) -> list[tuple[str, str, str]]:
    """(label, value, note) of the run's verdicts, as the reports word them: ``cells`` and
    ``rows`` (passed, failed, without a verdict), ``candidates`` each candidate's rows."""
    n_pass, n_fail, n_none = cells
    rows_p, rows_f, rows_n = rows
    each = ", ".join(f"{name} {p} of {p + f}" for name, (p, f, _n) in candidates.items() if p + f)
    rate = f"{100 * n_pass / (n_pass + n_fail):.0f}%" if n_pass + n_fail else "-"
    s = summary
    return [
        (
            "verdicts",
            f"{rows_p} of {_plural(rows_p + rows_f, 'candidate line')} passed",
            (f"{each}; " if each else "")
            + (f"{rows_n} without a verdict; " if rows_n else "")
            + f"aggregation {aggregation}",
        ),
        (
            "pass rate",
            rate,
            f"{n_pass} of {_plural(n_pass + n_fail, 'cell')} with a verdict passed"
            + (f"; {n_none} without a verdict" if n_none else ""),
        ),
        ("answers", str(answers), _plural(s.n_errors, "error") if s.n_errors else ""),
        ("judgments", str(s.n_judgments), ""),
        ("cost", "unknown" if s.cost_usd is None else f"${s.cost_usd:.4f}", ""),
    ]


def verdict_stats(verdicts: RunVerdicts) -> dict[str, Any]:
    """What the runs list shows of a run: cells passed of those with a verdict, and the
    mean of the cells' scores (on the run's main scale)."""
    passed, failed, _ = verdicts.count("cells")
    sums = {10: [0.0, 0], 100: [0.0, 0]}
    for c in verdicts.cells.values():
        if c.score is not None and c.scale in sums:
            sums[c.scale][0] += c.score
            sums[c.scale][1] += 1
    return cell_stats(passed, failed, {k: (v[0], int(v[1])) for k, v in sums.items()})


def cell_stats(passed: int, failed: int, scores: Mapping[int, tuple[float, int]]) -> dict[str, Any]:
    """:func:`verdict_stats` from the cells passed and failed and, per scale (10, 100),
    the sum and number of the scores of the cells with one (summed in the suite's order)."""
    scale = 10 if scores.get(10, (0.0, 0))[1] or not scores.get(100, (0.0, 0))[1] else 100
    total, n = scores.get(scale, (0.0, 0))
    return {
        "passed": passed,
        "with_verdict": passed + failed,
        "rate": passed / (passed + failed) if passed + failed else None,
        "score": total / n if n else None,
        "scale": scale,
        "cells": n,
    }


def _pages(
    run_id: str, query: Query, current: int, pages: int, name: str, other: dict[str, Any]
) -> list[Any]:
    """Links to the first and last pages and those around ``current`` (``other``: the
    other list's page, kept)."""
    wanted = sorted({1, current - 2, current - 1, current, current + 1, current + 2, pages})
    out: list[Any] = []
    anchor = "answers" if name == "page" else "matrix"
    for n in (p for p in wanted if 1 <= p <= pages):
        out.append(
            (
                str(n),
                _href(run_id, query.params(**other, **{name: n if n > 1 else None}), anchor),
                n == current,
            )
        )
    return out


def _money(x: float | None) -> str:
    return "unknown" if x is None else f"${x:.4f}"


def _percent(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _overview(table: list[dict[str, Any]], run_id: str) -> list[dict[str, Any]]:
    out = []
    for c in table:
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


def _aspects(aspects: list[dict[str, Any]], run_id: str) -> list[dict[str, Any]]:
    out = []
    for a in aspects:
        where = {"check": a["criterion"]} if a["check"] else {"criterion": a["criterion"]}
        if not a["check"]:
            where["evaluator"] = a["evaluator"]
        out.append({**a, "href": _href(run_id, {**where, "failed": "1"})})
    return out


def page_parts(
    run_id: str,
    *,
    stats: dict[str, Any],
    facts: list[tuple[str, str, str]],
    aggregation: str,
    tally: Tally,
    options: dict[str, list[str]],
    matrix: dict[str, Any],
) -> dict[str, Any]:
    """What a run's page shows whatever the query (JSON-ready: kept in its snapshot)."""
    return {
        "stats": stats,
        "facts": [list(f) for f in facts],
        "aggregation": aggregation,
        "overview": _overview(tally.candidate_table(), run_id),
        "aspects": _aspects(tally.failing_aspects(), run_id),
        "options": options,
        "matrix": matrix,
    }


def run_context(
    view: RunView, summary: RunSummary, store: Store, params: Mapping[str, str]
) -> dict[str, Any]:
    """Everything ``run.html.j2`` shows for ``params`` (the request's query string): the
    run's snapshot ``view`` and the page's answers, read from ``store``.

    Raises:
        StaleView: The run changed under ``view`` (build it again).
    """
    query = Query.from_params(params)
    try:
        mpage = int(params.get("mpage", "1") or 1)
    except ValueError:
        mpage = 1
    run_id = summary.id
    parts = view.page_parts

    def prompts(ids: set[int]) -> dict[int, str]:
        from qualspec.errors import StoreError

        out = {}
        for version_id in sorted(ids):
            try:
                out[version_id] = store.get_prompt_by_id(version_id).text
            except StoreError:  # a version this store does not hold: no prompt shown
                continue
        return out

    found, book = view.page(
        query,
        lambda word: store.search_run(run_id, word),
        lambda ids: store.load_run_part(
            run_id, ids=ids, summary=summary, evaluators=view.evaluators
        ),
        prompts,
    )
    grid = matrix(parts["matrix"], run_id, query, mpage)
    labels = people_labels(store, run_id, [a.record.key for a in found.answers])
    shown = [
        {
            "a": a,
            "prompt": book.sent_for(a),
            "where": _answer_where(a.record),
            "labels": labels.get(a.record.key, {}),
        }
        for a in found.answers
    ]
    return {
        "title": summary.suite_name,
        "run": summary,
        "stats": parts["stats"],
        "facts": parts["facts"],
        "aggregation": parts["aggregation"],
        "overview": parts["overview"],
        "aspects": parts["aspects"],
        "matrix": grid,
        "mpages": _pages(run_id, query, grid["page"], grid["pages"], "mpage", {}),
        "found": found,
        "answers": shown,
        "pages": _pages(
            run_id,
            query,
            found.page,
            found.pages,
            "page",
            {"mpage": grid["page"] if grid["page"] > 1 else None},
        ),
        "query": query,
        "options": parts["options"],
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
