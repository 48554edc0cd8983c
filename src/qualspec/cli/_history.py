"""``qualspec runs list|show|export``, ``qualspec diff`` and ``qualspec report``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualspec.store import RunRecord

__all__ = ["cmd_diff", "cmd_report", "cmd_runs_export", "cmd_runs_list", "cmd_runs_show"]


def cmd_runs_list(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print recent runs, newest first."""
    from rich.console import Console
    from rich.table import Table

    from qualspec.store import Store

    with Store.open(ns.db) as store:
        runs = store.list_runs(suite_name=ns.suite, limit=ns.limit)
    console = Console(highlight=False)
    if not runs:
        console.print("No runs recorded yet: start one with qualspec run SUITE")
        return 0
    from rich.text import Text

    table = Table()
    # ids, statuses and dates are never cut or wrapped (a narrow or piped console folds the
    # suite name instead)
    table.add_column("run", no_wrap=True, min_width=max(len(run.id) for run in runs))
    table.add_column("suite", overflow="fold")
    table.add_column("status", no_wrap=True)
    table.add_column("started (UTC)", no_wrap=True)
    for column in ("responses", "judgments", "cost"):
        table.add_column(column, justify="right", no_wrap=True)
    for run in runs:
        table.add_row(
            Text(run.id),
            Text(run.suite_name),
            Text(run.status),
            run.started_at.strftime("%Y-%m-%d %H:%M:%S"),
            str(run.n_responses),
            str(run.n_judgments),
            "unknown" if run.cost_usd is None else f"${run.cost_usd:.4f}",
        )
    console.print(table)
    return 0


def cmd_runs_show(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print the console report of a stored run."""
    from rich.console import Console

    from qualspec.report import prompt_refs, render_run
    from qualspec.store import Store

    with Store.open(ns.db) as store:
        run = store.load_run(ns.run_id)
        refs = prompt_refs(store, run)
    render_run(
        run,
        Console(highlight=False),
        show_responses=ns.show_responses,
        prompts=refs,
        verbose=bool(getattr(ns, "verbose", 0)),
    )
    return 0


def cmd_runs_export(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Write a stored run as json, jsonl or csv."""
    from qualspec.report import export_run, prompt_refs
    from qualspec.store import Store

    with Store.open(ns.db) as store:
        run = store.load_run(ns.run_id, include_superseded=ns.include_superseded)
        refs = prompt_refs(store, run) if ns.format == "json" else None
    text = export_run(run, ns.format, Path(ns.output) if ns.output else None, prompts=refs)
    if text is not None:
        sys.stdout.write(text)
    return 0


def _load(ref: str, db: str | None) -> RunRecord:
    """A run id (or unique prefix) from the store, or a results JSON file."""
    from qualspec.report import read_results_file

    path = Path(ref)
    if path.suffix.lower() == ".json" or path.is_file():
        return read_results_file(path)
    from qualspec.store import Store

    with Store.open(db) as store:
        return store.load_run(ref)


def cmd_diff(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Compare two runs; exit 1 on regression with --fail-on-regression."""
    from qualspec.analysis import diff_runs, format_diff

    diff = diff_runs(_load(ns.a, ns.db), _load(ns.b, ns.db), noise=ns.noise)
    sys.stdout.write(format_diff(diff, ns.format).rstrip("\n") + "\n")
    return 1 if ns.fail_on_regression and diff.has_regression else 0


def cmd_report(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Write the HTML report of a stored run (or of a results JSON file)."""
    from qualspec.report import write_html

    run = _load(ns.run_id, ns.db)
    write_html(run, ns.html)
    print(f"HTML report: {ns.html}   (run {run.summary.id})")
    return 0
