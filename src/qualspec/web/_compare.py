"""The diff page: two runs side by side, tuple by tuple (issue 19, item 2).

The tuples, their status and each side's PASS/FAIL are :func:`qualspec.analysis.diff_runs`'s,
whose verdicts are :func:`qualspec.analysis.run_verdicts`' (the one verdict the run page,
the report and ``qualspec diff`` show). On top of them, per tuple on the page:

* each side's label, score and link to its answers in the run explorer (the filtered view
  of that exact cell); a side whose every answer is an error reads ``error: <message>``
  (an HTTP 500 is an error, not "unscored"), and the tuple's status reads ``error``;
* the per-criterion score deltas (judges' criteria, field grades) and per-check results
  (``expect:`` checks: passed of run) of A and B;
* the answers' texts side by side, run by run.

The run picker offers the runs of the first run's suite unless ``all=1`` (runs of another
suite share no tuple but by name). Rows come in pages of :data:`PER_PAGE`, worst first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from qualspec.analysis import (
    CHECKS_EVALUATOR,
    STATUSES,
    RunDiff,
    TupleChange,
    candidate_records,
    cell_key,
    format_temperature,
    judgments_by_response,
)
from qualspec.judges import is_comparison
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord

__all__ = ["PER_PAGE", "Aspect", "CompareRow", "Side", "compare_context", "picker"]

PER_PAGE = 100
NONE = "-"  # the explorer's spelling of a missing role or input
_ERROR_CHARS = 300
_TEXT_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class Side:
    """One run's side of a tuple."""

    run_id: str
    present: bool
    label: str  # PASS, FAIL, ERROR, UNSCORED, ANSWERED, or "absent"
    css: str
    text: str  # "8.50 PASS", "error: HTTP 500 ...", "absent"
    href: str
    errors: int = 0
    runs: int = 0
    error: str | None = None  # the first error message, when any answer is one
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Aspect:
    """A criterion (or check) of a tuple in A and in B."""

    kind: str  # "criterion" or "check"
    evaluator: str
    name: str
    a: str
    b: str
    delta: str
    css: str  # "same", "up", "down", "changed"


@dataclass(slots=True)
class CompareRow:
    """A tuple as the page shows it."""

    change: TupleChange
    status: str
    temperature: str
    a: Side
    b: Side
    aspects: list[Aspect] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)


class _Cells:
    """A run's answers and their judgments by cell."""

    def __init__(self, run: RunRecord) -> None:
        self.run_id = run.summary.id
        self.answers: dict[Any, list[ResponseRecord]] = {}
        for r in candidate_records(run).responses:
            self.answers.setdefault(cell_key(r), []).append(r)
        for rs in self.answers.values():
            rs.sort(key=lambda r: r.run_index)
        self.judged = judgments_by_response(run)

    def of(self, change: TupleChange) -> list[ResponseRecord]:
        candidate, role, scenario, input_id, temperature = change.key
        t = None if temperature is None else float(temperature)
        return self.answers.get((scenario, input_id, role, candidate, t), [])

    def judgments(self, answers: Sequence[ResponseRecord]) -> list[JudgmentRecord]:
        return [j for r in answers for j in self.judged.get(r.key, ()) if not is_comparison(j)]


def _href(run_id: str, change: TupleChange) -> str:
    """The run explorer's view of exactly this tuple's answers."""
    candidate, role, scenario, input_id, temperature = change.key
    params = {
        "scenario": scenario,
        "input": input_id if input_id is not None else NONE,
        "role": role if role is not None else NONE,
        "candidate": candidate,
        "temperature": format_temperature(temperature),
    }
    return f"/runs/{run_id}?{urlencode(params)}#answers"


def _css(label: str) -> str:
    return {"PASS": "pass", "FAIL": "fail", "ERROR": "error", "UNSCORED": "unscored"}.get(
        label, "answered"
    )


def _first_error(answers: Iterable[ResponseRecord]) -> str | None:
    for r in answers:
        if r.error is not None:
            text = " ".join(r.error.split())
            return text if len(text) <= _ERROR_CHARS else text[: _ERROR_CHARS - 1] + "…"
    return None


def _side(
    cells: _Cells,
    change: TupleChange,
    label: str | None,
    score: float | None,
    reasons: tuple[str, ...],
) -> Side:
    href = _href(cells.run_id, change)
    if label is None:
        return Side(cells.run_id, False, "absent", "absent", "absent", href)
    answers = cells.of(change)
    errors = sum(1 for r in answers if r.error is not None)
    error = _first_error(answers)
    if label == "ERROR":
        text = f"error: {error}" if error else "error"
    elif score is not None:
        text = f"{score:.2f}" + ("" if change.scale == 10 else f"/{change.scale}") + f" {label}"
    else:
        text = label
    return Side(
        run_id=cells.run_id,
        present=True,
        label=label,
        css=_css(label),
        text=text,
        href=href,
        errors=errors,
        runs=len(answers),
        error=error,
        reasons=reasons,
    )


_Measure = tuple[str, float | None]  # as shown, and the number it compares by


def _means(judgments: Iterable[JudgmentRecord]) -> dict[tuple[str, str], _Measure]:
    """(evaluator, criterion) -> its mean score (criteria, field grades) or its passes of
    its runs (checks: ``2/2 pass``, compared by the share that passed)."""
    scores: dict[tuple[str, str], list[float]] = {}
    checks: dict[tuple[str, str], list[bool]] = {}
    seen: dict[tuple[str, str], None] = {}
    for j in judgments:
        key = (j.evaluator, j.criterion)
        seen[key] = None
        if j.evaluator == CHECKS_EVALUATOR:
            if j.passed is not None:
                checks.setdefault(key, []).append(j.passed)
        elif j.score is not None:
            scores.setdefault(key, []).append(j.score)
    out: dict[tuple[str, str], _Measure] = {}
    for key in seen:
        if key[0] == CHECKS_EVALUATOR:
            got = checks.get(key, [])
            share = sum(got) / len(got) if got else None
            out[key] = (f"{sum(got)}/{len(got)} pass" if got else "no verdict", share)
        else:
            values = scores.get(key, [])
            mean = sum(values) / len(values) if values else None
            out[key] = ("unscored" if mean is None else f"{mean:.2f}", mean)
    return out


def _aspects(
    a: Mapping[tuple[str, str], _Measure], b: Mapping[tuple[str, str], _Measure]
) -> list[Aspect]:
    """Every criterion, then every check, of either side: A, B, the delta, the direction."""
    keys = sorted(dict.fromkeys([*a, *b]), key=lambda k: (k[0] == CHECKS_EVALUATOR, k))
    out = []
    for key in keys:
        (ta, va), (tb, vb) = a.get(key, ("-", None)), b.get(key, ("-", None))
        check = key[0] == CHECKS_EVALUATOR
        delta, css = "", "same" if ta == tb else "changed"
        if va is not None and vb is not None:
            d = round(vb - va, 9)
            css = "up" if d > 0 else "down" if d < 0 else "same"
            if not check:
                delta = f"{d:+.2f}"
        out.append(Aspect("check" if check else "criterion", key[0], key[1], ta, tb, delta, css))
    return out


def _clip(text: str) -> str:
    return text if len(text) <= _TEXT_CHARS else text[:_TEXT_CHARS] + "\n… (cut: open the answer)"


def _texts(a: Sequence[ResponseRecord], b: Sequence[ResponseRecord]) -> list[tuple[str, str]]:
    def show(r: ResponseRecord | None) -> str:
        if r is None:
            return ""
        if r.error is not None:
            return _clip(f"error: {r.error}")
        return _clip(r.text or "")

    n = max(len(a), len(b))
    return [
        (show(a[i] if i < len(a) else None), show(b[i] if i < len(b) else None)) for i in range(n)
    ]


def compare_context(
    a: RunRecord, b: RunRecord, diff: RunDiff, params: Mapping[str, str]
) -> dict[str, Any]:
    """What ``diff.html.j2`` shows of ``diff`` (the page of rows ``params`` asks for)."""
    statuses: list[str] = [c.status for c in diff.changes]
    counts = {s: statuses.count(s) for s in STATUSES}
    wanted = params.get("status") or ""
    picked = [
        (c, s) for c, s in zip(diff.changes, statuses, strict=True) if not wanted or s == wanted
    ]
    pages = max(1, math.ceil(len(picked) / PER_PAGE))
    try:
        page = min(max(1, int(params.get("page", "1") or 1)), pages)
    except ValueError:
        page = 1
    shown = picked[(page - 1) * PER_PAGE : page * PER_PAGE]
    cells_a, cells_b = _Cells(a), _Cells(b)
    rows = []
    for change, status in shown:
        answers_a, answers_b = cells_a.of(change), cells_b.of(change)
        rows.append(
            CompareRow(
                change=change,
                status=status,
                temperature=format_temperature(change.temperature),
                a=_side(cells_a, change, change.label_a, change.score_a, change.reasons_a),
                b=_side(cells_b, change, change.label_b, change.score_b, change.reasons_b),
                aspects=_aspects(
                    _means(cells_a.judgments(answers_a)), _means(cells_b.judgments(answers_b))
                ),
                texts=_texts(answers_a, answers_b),
            )
        )
    base = {k: v for k, v in params.items() if k in ("a", "b", "noise", "all")}

    def link(**extra: Any) -> str:
        merged = {**base, **{k: v for k, v in extra.items() if v}}
        return "/diff?" + urlencode(merged)

    return {
        "rows": rows,
        "counts": [(s, n, link(status=s)) for s, n in counts.items() if n],
        "status": wanted,
        "all_link": link(),
        "matching": len(picked),
        "page": page,
        "pages": [(n, link(status=wanted, page=n if n > 1 else None)) for n in range(1, pages + 1)],
        "first": (page - 1) * PER_PAGE + 1 if rows else 0,
        "last": (page - 1) * PER_PAGE + len(rows),
        "same_suite": diff.suite_a == diff.suite_b,
    }


def picker(rows: Sequence[Any], a: str | None, b: str | None, every: bool) -> dict[str, Any]:
    """The runs the picker offers: those of the first run's suite (run A's, else B's, else
    the newest run's), or every run when ``every``; the chosen runs always among them."""
    by_id = {r.id: r for r in rows}
    first = by_id.get(a or "") or by_id.get(b or "") or (rows[0] if rows else None)
    suite = first.suite_name if first is not None else None
    if every or suite is None:
        offered = list(rows)
    else:
        offered = [r for r in rows if r.suite_name == suite or r.id in (a, b)]
    ids = [r.id for r in offered]
    pick_b = b if b in by_id else (ids[0] if ids else None)
    pick_a = a if a in by_id else None
    if pick_a is None and pick_b in ids:  # the run of that suite just before B
        before = [i for i in ids[ids.index(pick_b) + 1 :] if by_id[i].suite_name == suite]
        pick_a = before[0] if before else pick_b
    return {
        "runs": offered,
        "pick_a": pick_a,
        "pick_b": pick_b,
        # the runs named that exist (an unknown id is never echoed back in a link)
        "known_a": a if a in by_id else None,
        "known_b": b if b in by_id else None,
        "suite": suite,
        "every": every,
        "hidden": len(rows) - len(offered),
    }
