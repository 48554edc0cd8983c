"""Render a :class:`RunComparison` as plain text, Markdown or JSON."""

from __future__ import annotations

from typing import Any

from qualspec.analysis._compare import RunComparison, ScopedComparison
from qualspec.analysis._diff_format import DiffFormat, render_as
from qualspec.analysis._stats import PairedComparison

__all__ = ["COMPARE_SCHEMA_VERSION", "compare_to_dict", "format_comparison", "verdict_text"]

COMPARE_SCHEMA_VERSION = "1.1"
"""``schema_version`` of the JSON comparison (major.minor; readers refuse a newer major)."""

_HEADER = ("", "n", "A", "B", "B-A", "95% CI", "p", "effect (dz)", "verdict")


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _dz(result: PairedComparison) -> str:
    size = "-" if result.effect_size is None else f"{result.effect_size:+.2f}"
    return f"{result.effect} ({size})"


def _disagree(r: PairedComparison) -> bool:
    """The interval excludes 0 but the test does not reject "no change"."""
    return r.verdict == "no detectable change" and (r.ci_low > 0 or r.ci_high < 0)


def verdict_text(r: PairedComparison) -> str:
    """The verdict as a table shows it: ``inconclusive (CI excludes 0, p >= 0.05)`` where
    the bootstrap interval and the permutation test disagree.

    The **permutation test decides** (a change needs ``p < alpha`` and an interval that
    excludes 0): with few pairs the percentile bootstrap's interval is too narrow to trust
    alone, while the exact test's p is exact. So an interval that excludes 0 with
    ``p >= alpha`` is not a change, and it is not "no detectable change" either: it reads
    ``inconclusive``.
    """
    if _disagree(r):
        return f"inconclusive (CI excludes 0, p >= {r.alpha:g})"
    return r.verdict


def _verdict_line(c: RunComparison, o: PairedComparison) -> str:
    numbers = (
        f"B-A {o.difference:+.2f} of {c.scale}, 95% CI [{o.ci_low:+.2f}, {o.ci_high:+.2f}], "
        f"p {_p(o.p_value)}, {o.n} pairs"
    )
    regression = f"regression: {'yes' if c.has_regression else 'no'}"
    if not _disagree(o):
        return f"Verdict: {o.verdict} ({numbers}); {regression}"
    floor = ""
    if o.exact and 2 / 2**o.n >= o.alpha:
        floor = f"; with {o.n} pairs p cannot go below {2 / 2**o.n:.3g}: compare more inputs"
    return (
        f"Verdict: inconclusive ({numbers}): the interval excludes 0 but the permutation "
        f"test does not reject no change (p >= {o.alpha:g}), and the test decides, so no "
        f"significant change is claimed{floor}; {regression}"
    )


def _row(name: str, r: PairedComparison, digits: int) -> tuple[str, ...]:
    return (
        name,
        str(r.n),
        f"{r.mean_a:.{digits}f}",
        f"{r.mean_b:.{digits}f}",
        f"{r.difference:+.{digits}f}",
        f"[{r.ci_low:+.{digits}f}, {r.ci_high:+.{digits}f}]",
        _p(r.p_value),
        _dz(r),
        verdict_text(r),
    )


def _title(c: RunComparison) -> str:
    suites = c.suite_a if c.suite_a == c.suite_b else f"{c.suite_a} -> {c.suite_b}"
    what = "field accuracy 0-100" if c.source == "field_grades" else "criteria scores 0-10"
    return f"qualspec compare {c.run_a} -> {c.run_b} (suite {suites}; {what})"


def _sections(c: RunComparison) -> list[tuple[str, list[ScopedComparison]]]:
    sections = [
        (f"per {c.aspect_name}", c.by_aspect),
        ("per input", c.by_input),
    ]
    if len(c.by_candidate) > 1:
        sections.append(("per candidate", c.by_candidate))
    return sections


def _footer(c: RunComparison) -> list[str]:
    lines = []
    if c.only_a or c.only_b:
        lines.append(
            f"Unpaired: {c.only_a} only in A, {c.only_b} only in B (left out of every test)."
        )
    warning = c.references.warning() if c.references is not None else None
    if warning is not None:
        lines.append(f"WARNING: {warning}")
    if c.overall is None:
        lines.append("Verdict: nothing to compare: no unit was scored in both runs.")
    else:
        lines.append(_verdict_line(c, c.overall))
    return lines


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADER))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _text(c: RunComparison) -> str:
    digits = 1 if c.scale == 100 else 2
    lines = [_title(c), ""]
    if c.overall is not None:
        rows = [_HEADER, _row("overall", c.overall, digits)]
        for label, scoped in _sections(c):
            rows.append((f"{label}:", *([""] * (len(_HEADER) - 1))))
            rows += [_row(f"  {s.name}", s.result, digits) for s in scoped]
        lines += _table(rows)
        lines.append("")
    lines += _footer(c)
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _markdown(c: RunComparison) -> str:
    digits = 1 if c.scale == 100 else 2
    lines = [f"## {_md(_title(c))}", ""]
    if c.overall is not None:
        scopes = [("Overall", [ScopedComparison("overall", c.overall)])]
        scopes += [(label.capitalize(), scoped) for label, scoped in _sections(c)]
        for label, scoped in scopes:
            lines += [f"### {label}", ""]
            lines.append("| " + " | ".join(h or "scope" for h in _HEADER) + " |")
            lines.append("|" + "---|" * len(_HEADER))
            for s in scoped:
                lines.append(
                    "| " + " | ".join(_md(x) for x in _row(s.name, s.result, digits)) + " |"
                )
            lines.append("")
    lines += [f"**{_md(line)}**" for line in _footer(c)]
    return "\n".join(lines) + "\n"


def _result(r: PairedComparison) -> dict[str, Any]:
    return {
        "n": r.n,
        "mean_a": r.mean_a,
        "mean_b": r.mean_b,
        "difference": r.difference,
        "ci_low": r.ci_low,
        "ci_high": r.ci_high,
        "p_value": r.p_value,
        "exact": r.exact,
        "effect_size": r.effect_size,
        "effect": r.effect,
        "verdict": r.verdict,
        "verdict_text": verdict_text(r),
        "alpha": r.alpha,
    }


def compare_to_dict(c: RunComparison) -> dict[str, Any]:
    """The comparison as JSON-ready data, with ``schema_version``.

    Returns:
        ``{"schema_version", "run_a", "run_b", "suite_a", "suite_b", "source", "scale",
        "has_regression", "overall", "by_field" (or "by_criterion"), "by_input",
        "by_candidate", "only_a", "only_b", "reference_changes"}``; each breakdown a list
        of ``{"name", "n", "mean_a", "mean_b", "difference", "ci_low", "ci_high",
        "p_value", "exact", "effect_size", "effect", "verdict", "verdict_text", "alpha"}``;
        ``reference_changes`` (field grades; else None) is ``{"inputs", "compared",
        "review_lost", "changes": [{"input", "reason", "review_lost", "status_a",
        "status_b"}]}``.
    """

    def scoped(items: list[ScopedComparison]) -> list[dict[str, Any]]:
        return [{"name": s.name} | _result(s.result) for s in items]

    return {
        "schema_version": COMPARE_SCHEMA_VERSION,
        "run_a": c.run_a,
        "run_b": c.run_b,
        "suite_a": c.suite_a,
        "suite_b": c.suite_b,
        "source": c.source,
        "scale": c.scale,
        "has_regression": c.has_regression,
        "overall": None if c.overall is None else _result(c.overall),
        f"by_{c.aspect_name}": scoped(c.by_aspect),
        "by_input": scoped(c.by_input),
        "by_candidate": scoped(c.by_candidate),
        "only_a": c.only_a,
        "only_b": c.only_b,
        "reference_changes": None if c.references is None else c.references.to_dict(),
    }


def format_comparison(c: RunComparison, fmt: DiffFormat = "text") -> str:
    """Render a comparison for people (``text``, ``markdown``) or programs (``json``).

    Raises:
        ConfigError: ``fmt`` is not one of the three formats.
    """
    return render_as(
        fmt,
        "comparison",
        text=lambda: _text(c),
        markdown=lambda: _markdown(c),
        data=lambda: compare_to_dict(c),
    )
