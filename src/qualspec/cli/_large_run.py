"""The end of a large ``qualspec run`` (more work items than ``--summarise-above``): the
results file streamed from the store a page at a time, and a summary of counts instead
of a report of every cell (the web app and ``qualspec report`` show the detail)."""

from __future__ import annotations

import argparse
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from qualspec.cli._args import positive_int
from qualspec.cli._console import plural, say
from qualspec.cli._store_close import KEEP_VIEW_UNTIL
from qualspec.messages import one_line

if TYPE_CHECKING:
    from rich.console import Console

    from qualspec.engine import RunOutcome
    from qualspec.store import Store

__all__ = ["add_summarise_above", "budget_stop", "large_run_report"]


def add_summarise_above(run: argparse.ArgumentParser) -> None:
    """``qualspec run --summarise-above N``: where a run starts to end the large way."""
    run.add_argument(
        "--summarise-above",
        type=positive_int,
        default=5_000,
        metavar="N",
        help="a run of more work items than N ends with counts only, its results file "
        "streamed from the store: nothing loaded whole (default 5000)",
    )


def large_run_report(
    ns: argparse.Namespace, outcome: RunOutcome, store: Store, console: Console
) -> int:
    """Write the results file (streamed), print the counts and the footer, close the
    store; the exit code (1 when no cell could be answered, or with
    ``--fail-on-errors`` when a call failed)."""
    from qualspec.report import default_results_path, write_results_stream

    summary = outcome.record.summary
    try:
        for warning in outcome.warnings:
            say(console, ("warning:", "yellow"), f" {warning}")
        path = (
            Path(ns.output)
            if ns.output
            else default_results_path(
                summary.suite_name, datetime.now(UTC), ns.results_dir, run_id=summary.id
            )
        )
        write_results_stream(store, summary.id, path)
        counts = store.run_counts(summary.id)
        db_display = store.url_for_display
        kept = _keep_view(store, summary.id, counts["candidates"])
        html = _write_html(store, summary.id, ns.html) if ns.html else None
    finally:
        store.close()
    stats = outcome.stats
    say(
        console,
        ("Large run:", "bold"),
        f" {counts['responses']} answers ({counts['errors']} errors, "
        f"{counts['cached_responses']} from the cache), {counts['judgments']} judgments "
        f"({counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['judgment_errors']} errors): per-cell detail in the results file and "
        "`qualspec serve`",
    )
    say(
        console,
        ("Calls:", "bold"),
        f" {stats.candidate_calls} candidate, {stats.judge_calls} judge"
        + (f", {stats.reference_calls} reference" if stats.reference_calls else "")
        + " made",
    )
    say(console, f"Results: {path}   (run id {outcome.run_id}, database {db_display})")
    if kept:
        say(console, f"Run page: ready for `qualspec serve` (/runs/{outcome.run_id})")
    if html is not None:
        say(console, html)
    if outcome.status == "budget_exceeded":
        say(console, budget_stop(ns, outcome.run_id, stats.skipped_for_budget))
    return _exit_code(counts, fail_on_errors=getattr(ns, "fail_on_errors", False))


def _keep_view(store: Store, run_id: str, answers: int) -> bool:
    """Keep the run's page snapshot (built from the store in parts) so that the first
    view of ``qualspec serve`` reads it; False when not kept (too many answers, see
    ``KEEP_VIEW_UNTIL``, or it could not be built: the server builds it then). Whatever
    its size, a summarised run has no per-cell report: its page is where to look next
    (``--summarise-above`` below ``KEEP_VIEW_FROM`` summarises smaller runs)."""
    if answers > KEEP_VIEW_UNTIL:
        return False
    from qualspec.web import keep_run_view

    try:
        return keep_run_view(store, run_id)
    except Exception as exc:  # noqa: BLE001 - optional: the run and its results are kept
        logging.getLogger("qualspec").warning("run page snapshot not kept: %s", exc)
        return False


def _write_html(store: Store, run_id: str, path: str) -> str:
    """Write the HTML report of a large run (its summary: verdicts, candidates, the most
    failed criteria, the matrix; made from the run's page snapshot, never from every
    answer); the line that says where, or why not."""
    from qualspec.report import write_large_html
    from qualspec.web import run_page_parts

    try:
        write_large_html(store.get_run(run_id), run_page_parts(store, run_id), path)
    except Exception as exc:  # noqa: BLE001 - the results file is written: say why, go on
        return f"HTML report: not written ({one_line(str(exc), 200)}); use qualspec serve"
    return f"HTML report: {path} (the run summed up; every answer in qualspec serve)"


def budget_stop(ns: argparse.Namespace, run_id: str, skipped: int) -> tuple[str, str]:
    """The line a run stopped by ``--max-cost`` ends with, and its colour."""
    return (
        f"Stopped at the budget of ${ns.max_cost:.2f}; {plural(skipped, 'call')} not made. "
        f"Continue with: qualspec run {ns.suite} --resume {run_id} --max-cost <more>",
        "yellow",
    )


def _exit_code(counts: dict[str, int], *, fail_on_errors: bool) -> int:
    failed, candidates = counts["failed_candidates"], counts["candidates"]
    if candidates and failed == candidates:
        print(
            f"qualspec: run failed: no cell could be answered ({plural(failed, 'call')} failed)",
            file=sys.stderr,
        )
        return 1
    if fail_on_errors and (failed or counts["judgment_errors"]):
        print(
            f"qualspec: errors in the run (--fail-on-errors): {failed} candidate call(s) and "
            f"{counts['judgment_errors']} judgment(s) failed",
            file=sys.stderr,
        )
        return 1
    return 0
