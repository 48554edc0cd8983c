"""``qualspec compare`` (two runs, with confidence) and ``qualspec insights`` (one run)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from qualspec.cli._history import _load

__all__ = ["cmd_compare", "cmd_insights"]


def cmd_compare(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Compare two runs; exit 1 on a significant overall regression with --fail-on-regression."""
    from qualspec.analysis import compare_runs, format_comparison

    result = compare_runs(_load(ns.a, ns.db), _load(ns.b, ns.db))
    sys.stdout.write(format_comparison(result, ns.format).rstrip("\n") + "\n")
    return 1 if ns.fail_on_regression and result.has_regression else 0


def cmd_insights(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print the recommendations for one run, each with its evidence."""
    from qualspec.analysis import format_insights, run_insights

    found = run_insights(_load(ns.run_id, ns.db))
    sys.stdout.write(format_insights(found, ns.format).rstrip("\n") + "\n")
    return 0
