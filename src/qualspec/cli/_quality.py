"""``qualspec compare`` (two runs, with confidence) and ``qualspec insights`` (one run)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from qualspec.cli._history import _load

if TYPE_CHECKING:
    from qualspec.store import RunRecord

__all__ = ["cmd_compare", "cmd_insights"]


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
