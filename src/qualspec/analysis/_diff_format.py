"""Render a :class:`RunDiff` as plain text, Markdown or JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

from qualspec.analysis._diff import STATUSES, RunDiff, TupleChange
from qualspec.errors import ConfigError

__all__ = ["DIFF_SCHEMA_VERSION", "DiffFormat", "diff_to_dict", "format_diff", "render_as"]

DIFF_SCHEMA_VERSION = "1.2"
"""``schema_version`` of the JSON diff (major.minor; readers refuse a newer major). 1.2
added the status ``error`` and each change's ``error_a``/``error_b``."""

DiffFormat = Literal["text", "json", "markdown"]


def render_as(
    fmt: DiffFormat,
    what: str,
    *,
    text: Callable[[], str],
    markdown: Callable[[], str],
    data: Callable[[], Mapping[str, Any]],
) -> str:
    """A report of the ``what`` in the format asked for: ``text()``, ``markdown()`` or
    ``data()`` as indented JSON (each ending with a newline); only the one asked for is made.

    Raises:
        ConfigError: ``fmt`` is not one of the three formats.
    """
    if fmt == "text":
        return text()
    if fmt == "markdown":
        return markdown()
    if fmt == "json":
        return json.dumps(data(), indent=2, ensure_ascii=False) + "\n"
    raise ConfigError(f"Unknown {what} format {fmt!r}: use text, json or markdown")


_HEADER = (
    "status",
    "candidate",
    "role",
    "scenario",
    "input",
    "temp",
    "A",
    "B",
    "delta",
    "pass",
    "why",
)


def _score(value: float | None, scale: int = 10) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if scale == 10 else f"{value:.2f}/{scale}"


def _delta(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def _passed(value: bool | None, label: str | None = None) -> str:
    if value is None:
        return label or "-"  # ERROR, UNSCORED, ANSWERED: the run report's label
    return "PASS" if value else "FAIL"


def _why(change: TupleChange) -> str:
    """Why each failing side failed, as the run report says: ``B: 6.3/10 < 7``; a side
    whose every answer is an error, its error: ``B: error: HTTP 500 ...``."""
    parts = []
    for side, reasons, label, error in (
        ("A", change.reasons_a, change.label_a, change.error_a),
        ("B", change.reasons_b, change.label_b, change.error_b),
    ):
        if label == "ERROR" and error is not None:
            parts.append(f"{side}: error: {' '.join(error.split())[:_ERROR_CHARS]}")
        elif reasons:
            parts.append(f"{side}: {'; '.join(reasons)}")
    return " · ".join(parts)


_ERROR_CHARS = 200  # of an error message in the text and Markdown tables (JSON: whole)


def _row(change: TupleChange) -> tuple[str, ...]:
    return (
        change.status,
        change.candidate,
        change.role or "-",
        change.scenario,
        change.input_id or "-",
        "default" if change.temperature is None else str(change.temperature),
        _score(change.score_a, change.scale),
        _score(change.score_b, change.scale),
        _delta(change.delta),
        f"{_passed(change.passed_a, change.label_a)} -> {_passed(change.passed_b, change.label_b)}",
        _why(change),
    )


def _summary_line(diff: RunDiff) -> str:
    counts = diff.counts
    parts = ", ".join(f"{counts[s]} {s}" for s in STATUSES)
    verdict = "regression: yes" if diff.has_regression else "regression: no"
    return f"Summary: {len(diff.changes)} tuples: {parts}; {verdict}"


def _title(diff: RunDiff) -> str:
    suites = diff.suite_a if diff.suite_a == diff.suite_b else f"{diff.suite_a} -> {diff.suite_b}"
    how = (
        diff.aggregation_a
        if diff.aggregation_a == diff.aggregation_b
        else f"{diff.aggregation_a} -> {diff.aggregation_b}"
    )
    shown = "" if how == "mean_with_variance" else f"; aggregation {how}"
    return (
        f"qualspec diff {diff.run_a} -> {diff.run_b} (suite {suites}; noise {diff.noise:g}{shown})"
    )


def _references_line(diff: RunDiff) -> str | None:
    """The reference answers, named apart (they are not candidates), or None."""
    if not diff.references_a and not diff.references_b:
        return None
    n = diff.references_changed
    changed = f"changed for {n} input{'s' * (n != 1)}" if n else "unchanged"
    return (
        f"Reference answers (not candidates): {diff.references_a} in A, "
        f"{diff.references_b} in B, {changed}"
    )


def _text(diff: RunDiff) -> str:
    lines = [_title(diff), ""]
    if diff.changes:
        rows = [_HEADER, *(_row(c) for c in diff.changes)]
        widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADER))]
        for row in rows:
            cells = (cell.ljust(w) for cell, w in zip(row, widths, strict=True))
            lines.append("  ".join(cells).rstrip())
        lines.append("")
    else:
        lines += ["No tuples in either run.", ""]
    references = _references_line(diff)
    if references:
        lines.append(references)
    lines.append(_summary_line(diff))
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _markdown(diff: RunDiff) -> str:
    lines = [f"## {_md_cell(_title(diff))}", ""]
    if diff.changes:
        lines.append("| " + " | ".join(h.capitalize() for h in _HEADER) + " |")
        lines.append("|" + "---|" * len(_HEADER))
        for change in diff.changes:
            lines.append("| " + " | ".join(_md_cell(c) for c in _row(change)) + " |")
    else:
        lines.append("No tuples in either run.")
    references = _references_line(diff)
    lines += ["", *([_md_cell(references), ""] if references else []), f"**{_summary_line(diff)}**"]
    return "\n".join(lines) + "\n"


def diff_to_dict(diff: RunDiff) -> dict[str, Any]:
    """The diff as JSON-ready data, with ``schema_version``.

    Args:
        diff: A diff from :func:`diff_runs`.

    Returns:
        ``{"schema_version", "run_a", "run_b", "suite_a", "suite_b", "noise",
        "aggregation": {"a", "b"}, "references": {"a", "b", "changed"}, "has_regression",
        "summary": {status: count, ..., "total"}, "changes": [...]}``, each change with its
        key fields spelled out, its ``scale`` (10 or 100), ``reasons_a``/``reasons_b`` (why
        that side failed, as the run's report says; empty unless it failed) and
        ``label_a``/``label_b`` (the report's label: PASS, FAIL, ERROR, UNSCORED, ANSWERED;
        null when the tuple is not in that run) and ``error_a``/``error_b`` (the first
        error message of that side's answers; null when none failed; since 1.2).
    """
    summary: dict[str, int] = {status: n for status, n in diff.counts.items()}
    summary["total"] = len(diff.changes)
    return {
        "schema_version": DIFF_SCHEMA_VERSION,
        "run_a": diff.run_a,
        "run_b": diff.run_b,
        "suite_a": diff.suite_a,
        "suite_b": diff.suite_b,
        "noise": diff.noise,
        "aggregation": {"a": diff.aggregation_a, "b": diff.aggregation_b},
        "references": {
            "a": diff.references_a,
            "b": diff.references_b,
            "changed": diff.references_changed,
        },
        "has_regression": diff.has_regression,
        "summary": summary,
        "changes": [
            {
                "status": c.status,
                "candidate": c.candidate,
                "role": c.role,
                "scenario": c.scenario,
                "input_id": c.input_id,
                "temperature": c.temperature,
                "score_a": c.score_a,
                "score_b": c.score_b,
                "delta": c.delta,
                "passed_a": c.passed_a,
                "passed_b": c.passed_b,
                "scale": c.scale,
                "reasons_a": list(c.reasons_a),
                "reasons_b": list(c.reasons_b),
                "label_a": c.label_a,
                "label_b": c.label_b,
                "error_a": c.error_a,
                "error_b": c.error_b,
            }
            for c in diff.changes
        ],
    }


def format_diff(diff: RunDiff, fmt: DiffFormat = "text") -> str:
    """Render a diff for people (``text``, ``markdown``) or programs (``json``).

    Args:
        diff: A diff from :func:`diff_runs`.
        fmt: ``text`` (an aligned table, worst first, and a summary line), ``markdown``
            (the same as a Markdown table) or ``json`` (:func:`diff_to_dict`, indented).

    Returns:
        The rendered diff, ending with a newline.

    Raises:
        ConfigError: ``fmt`` is not one of the three formats.
    """
    return render_as(
        fmt,
        "diff",
        text=lambda: _text(diff),
        markdown=lambda: _markdown(diff),
        data=lambda: diff_to_dict(diff),
    )
