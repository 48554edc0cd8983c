"""The console report's last lines: the run's verdicts, a testkit test's results, and the
calls, tokens and cost it took."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qualspec.report._console_text import _Block, _money, _plural

if TYPE_CHECKING:
    from rich.console import Console

    from qualspec.analysis import (
        RunVerdicts,
    )
    from qualspec.store import RunRecord


def verdicts_line(verdicts: RunVerdicts) -> str:
    """The run's verdicts in one line (empty when nothing has one), as the HTML report
    and the results file count them.

    Example: ``2 of 3 candidate lines passed (c 1 of 1, flaky 1 of 2); cells: 5 of 6
    passed; aggregation majority``.
    """
    rows_p, rows_f, _ = verdicts.count("rows")
    if not rows_p + rows_f:
        return ""
    cells_p, cells_f, _ = verdicts.count("cells")
    each = ", ".join(
        f"{name} {p} of {p + f}" for name, (p, f, _n) in verdicts.candidates.items() if p + f
    )
    return (
        f"{rows_p} of {rows_p + rows_f} candidate lines passed ({each}); "
        f"cells: {cells_p} of {cells_p + cells_f} passed; aggregation {verdicts.aggregation}"
    )


def test_result_lines(metadata: dict[str, Any]) -> list[str]:
    """One line per SUT of a test run's results (``metadata["test"]``), else none.

    Example:
        >>> test_result_lines({"test": {"results": {"local/smollm2": {"correct": 0.5}}}})
        ['local/smollm2: correct 0.5']
    """
    test = metadata.get("test")
    results = test.get("results") if isinstance(test, dict) else None
    if not isinstance(results, dict):
        return []
    lines = []
    for sut, found in results.items():
        if isinstance(found, dict):
            values = ", ".join(
                f"{name} {'-' if value is None else f'{value:.3g}'}"
                for name, value in found.items()
                if value is None or isinstance(value, int | float)
            )
            lines.append(f"{sut}: {values}")
    return lines


def _render_totals(run: RunRecord, console: Console, verdicts: RunVerdicts) -> None:
    from qualspec.analysis import run_totals

    t = run_totals(run)
    out = _Block(console)
    out.line()
    line = verdicts_line(verdicts)
    if line:
        out.line(("Verdicts:", "bold"), f" {line}")
    errors = f" ({_plural(t.errors, 'error')})" if t.errors else ""
    cached = f", {t.cached_responses} from cache" if t.cached_responses else ""
    out.line(("Responses:", "bold"), f" {t.responses}{errors}{cached}")
    judgments = t.judgments - t.checks  # the checks of expect: have their own line
    unscored = f", {t.unscored} of {judgments} unscored" if t.unscored else ""
    if judgments:
        mean = "-" if t.mean_score is None else f"{t.mean_score:.2f}"
        passed, failed = t.passed - t.checks_passed, t.failed - t.checks_failed
        out.line(
            ("Judgments:", "bold"),
            f" {judgments}: {passed} passed, {failed} failed{unscored}; mean score {mean}",
        )
    if t.comparisons:
        out.line(
            ("Comparisons:", "bold"), f" {_plural(t.comparisons, 'group')} judged side by side"
        )
    if t.checks:
        out.line(
            ("Checks:", "bold"),
            f" {t.checks}: {t.checks_passed} passed, {t.checks_failed} failed (expect:)",
        )
    tokens_in = t.candidate_input_tokens + t.judge_input_tokens
    tokens_out = t.candidate_output_tokens + t.judge_output_tokens
    hint = "; a model has no known price: add it with --prices" if t.cost_usd is None else ""
    out.line(
        ("Tokens:", "bold"),
        f" {tokens_in} in / {tokens_out} out   ",
        ("Cost:", "bold"),
        f" {_money(t.cost_usd)} (candidates {_money(t.candidate_cost_usd)}, "
        f"judge {_money(t.judge_cost_usd)}{hint})",
    )
    out.flush()
