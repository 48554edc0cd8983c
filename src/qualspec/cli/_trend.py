"""``qualspec trend``: accuracy across several runs (prompt v1, v2, v3, ...), per run and
per model with n and 95% interval, and the change between consecutive runs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from qualspec.cli._args import Commands, add_db, positive_int
from qualspec.cli._history import _load

if TYPE_CHECKING:
    from qualspec.store import RunRecord

__all__ = ["add_parser", "cmd_trend"]


def _refs(ns: argparse.Namespace, runs: Sequence[RunRecord]) -> dict[int, tuple[str, int]]:
    """The prompt versions the runs link to, named (none for runs read from files)."""
    from qualspec.errors import StoreError
    from qualspec.report import prompt_refs
    from qualspec.store import Store

    refs: dict[int, tuple[str, int]] = {}
    if not any(r.prompt_versions for run in runs for r in run.responses):
        return refs
    try:
        with Store.open(ns.db) as store:
            for run in runs:
                refs.update(prompt_refs(store, run))
    except StoreError:  # no store to name them: the trend goes on without
        return {}
    return refs


def _runs(ns: argparse.Namespace) -> list[RunRecord]:
    from qualspec.errors import ConfigError

    if ns.runs and ns.suite:
        raise ConfigError("give runs or --suite NAME, not both")
    if ns.runs:
        if len(ns.runs) < 2:
            raise ConfigError("a trend needs at least two runs: give two or more run ids")
        return [_load(ref, ns.db) for ref in ns.runs]
    if not ns.suite:
        raise ConfigError("give two or more runs (oldest first), or --suite NAME [--last N]")
    from qualspec.store import Store

    with Store.open(ns.db) as store:
        found = [r for r in store.list_runs(suite_name=ns.suite, limit=10_000)]
        finished = [r for r in found if r.status == "finished"][: ns.last]
        if len(finished) < 2:
            raise ConfigError(
                f"suite {ns.suite!r} has {len(finished)} finished run"
                f"{'' if len(finished) == 1 else 's'}: a trend needs at least two"
                + (f" ({len(found) - len(finished)} unfinished left out)" if found else "")
            )
        return [store.load_run(r.id) for r in reversed(finished)]  # oldest first


def add_parser(commands: Commands) -> None:
    """``qualspec trend [RUN ...] [--suite NAME --last N]``."""
    trend = commands.add_parser(
        "trend",
        help="accuracy across several runs (oldest first), per model, with n and 95%% CI",
    )
    trend.add_argument(
        "runs", nargs="*", metavar="RUN", help="run ids, prefixes or results JSON, oldest first"
    )
    trend.add_argument("--suite", metavar="NAME", help="the last finished runs of this suite")
    trend.add_argument(
        "--last", type=positive_int, default=5, metavar="N", help="with --suite (default 5)"
    )
    trend.add_argument("--format", choices=["text", "json"], default="text")
    trend.add_argument("--output", "-o", metavar="PATH", help="also write the trend as JSON")
    trend.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a run is significantly worse than the one before it",
    )
    add_db(trend)
    trend.set_defaults(handler=cmd_trend)


def cmd_trend(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print the trend of several runs; exit 1 on a regression with --fail-on-regression."""
    from qualspec.analysis import format_trend, run_trend

    if ns.output in ("json", "text"):
        from qualspec.errors import ConfigError

        raise ConfigError(
            f"-o {ns.output}: -o takes a file path (e.g. trend.json); --format json prints JSON"
        )
    runs = _runs(ns)
    trend = run_trend(runs, _refs(ns, runs))
    if ns.output:
        from qualspec.analysis import trend_to_dict
        from qualspec.report import write_json_atomic

        write_json_atomic(Path(ns.output), trend_to_dict(trend))
    sys.stdout.write(format_trend(trend, ns.format))
    if ns.output:
        print(f"Trend JSON: {ns.output}", file=sys.stderr)
    return 1 if ns.fail_on_regression and trend.has_regression else 0
