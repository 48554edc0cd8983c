"""``qualspec compare`` (two runs, with confidence) and ``qualspec insights`` (one run)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from qualspec.cli._args import Commands, add_db
from qualspec.cli._history import _load

if TYPE_CHECKING:
    from qualspec.store import RunRecord

__all__ = ["add_compare_parser", "add_insights_parser", "cmd_compare", "cmd_insights"]


def add_compare_parser(commands: Commands) -> None:
    """``qualspec compare RUN_A RUN_B``."""
    compare = commands.add_parser(
        "compare",
        help="compare two runs with statistical confidence (run ids, prefixes or results "
        "JSON files)",
    )
    compare.add_argument("a", metavar="RUN_A", help="the baseline run (e.g. agent prompt v1)")
    compare.add_argument("b", metavar="RUN_B", help="the run to compare with it (e.g. v2)")
    compare.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    compare.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when B is significantly worse than A overall",
    )
    add_db(compare)
    compare.set_defaults(handler=cmd_compare)


def cmd_compare(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Compare two runs; exit 1 on a significant overall regression with --fail-on-regression."""
    from qualspec.analysis import compare_runs, format_comparison

    result = compare_runs(_load(ns.a, ns.db), _load(ns.b, ns.db))
    sys.stdout.write(format_comparison(result, ns.format).rstrip("\n") + "\n")
    return 1 if ns.fail_on_regression and result.has_regression else 0


def _baseline(run: RunRecord, db: str | None) -> RunRecord | None:
    """The previous run of the same suite with field grades (started before ``run``), from
    the store, or None: what ``insights`` compares the references with."""
    from qualspec.judges import is_field_grade
    from qualspec.store import Store

    if not any(is_field_grade(j) for j in run.judgments):
        return None
    with Store.open(db) as store:
        for summary in store.list_runs(run.summary.suite_name, limit=50):
            if summary.id == run.summary.id or summary.started_at >= run.summary.started_at:
                continue
            earlier = store.load_run(summary.id)
            if any(is_field_grade(j) for j in earlier.judgments):
                return earlier
    return None


def add_insights_parser(commands: Commands) -> None:
    """``qualspec insights RUN``."""
    insights = commands.add_parser(
        "insights", help="what to fix next in a run, each recommendation with its evidence"
    )
    insights.add_argument(
        "run_id", metavar="RUN", help="run id, unique id prefix, or results .json"
    )
    insights.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    add_db(insights)
    insights.set_defaults(handler=cmd_insights)


def cmd_insights(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print the recommendations for one run, each with its evidence (and, when the
    previous run of its suite graded against other references, a warning)."""
    from qualspec.analysis import format_insights, run_insights

    run = _load(ns.run_id, ns.db)
    ref = Path(ns.run_id)
    from_file = ref.suffix.lower() == ".json" or ref.is_file()
    found = run_insights(run, None if from_file else _baseline(run, ns.db))
    sys.stdout.write(format_insights(found, ns.format).rstrip("\n") + "\n")
    return 0
