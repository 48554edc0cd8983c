"""``qualspec runs list|show|export``, ``qualspec diff`` and ``qualspec report``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from qualspec.cli._args import Commands, add_db, add_output, non_negative_float, positive_int

if TYPE_CHECKING:
    from qualspec.store import RunRecord

__all__ = [
    "add_diff_parser",
    "add_report_parser",
    "add_runs_parser",
    "cmd_diff",
    "cmd_report",
    "cmd_runs_export",
    "cmd_runs_list",
    "cmd_runs_show",
]


def add_runs_parser(commands: Commands) -> None:
    """``qualspec runs list|show|export``."""
    runs = commands.add_parser("runs", help="history: list, show and export recorded runs")
    actions = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    rl = actions.add_parser("list", help="recent runs")
    rl.add_argument("--suite", help="only runs of this suite name")
    rl.add_argument("--limit", type=positive_int, default=20)
    add_db(rl)
    rl.set_defaults(handler=cmd_runs_list)
    rs = actions.add_parser("show", help="the report of one run")
    rs.add_argument("run_id", metavar="RUN")
    rs.add_argument("--show-responses", action="store_true")
    add_db(rs)
    rs.set_defaults(handler=cmd_runs_show)
    re_ = actions.add_parser("export", help="write a run as json, jsonl or csv")
    re_.add_argument("run_id", metavar="RUN")
    re_.add_argument("--format", choices=["json", "jsonl", "csv"], default="json")
    add_output(
        re_,
        "--output",
        hint="choose the format with --format json|jsonl|csv",
        help="file (default: standard output)",
    )
    re_.add_argument(
        "--include-superseded",
        action="store_true",
        help="also the rows a resume after an edit superseded (marked superseded)",
    )
    add_db(re_)
    re_.set_defaults(handler=cmd_runs_export)


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


def add_diff_parser(commands: Commands) -> None:
    """``qualspec diff A B``."""
    diff = commands.add_parser("diff", help="compare two runs (run ids or results JSON files)")
    diff.add_argument("a", metavar="A")
    diff.add_argument("b", metavar="B")
    diff.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    diff.add_argument(
        "--noise",
        type=non_negative_float,
        default=0.5,
        metavar="POINTS",
        help="score changes within this many points are unchanged (default 0.5)",
    )
    diff.add_argument(
        "--fail-on-regression", action="store_true", help="exit 1 when something regressed"
    )
    add_db(diff)
    diff.set_defaults(handler=cmd_diff)


def cmd_diff(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Compare two runs; exit 1 on regression with --fail-on-regression."""
    from qualspec.analysis import diff_runs, format_diff

    diff = diff_runs(_load(ns.a, ns.db), _load(ns.b, ns.db), noise=ns.noise)
    sys.stdout.write(format_diff(diff, ns.format).rstrip("\n") + "\n")
    return 1 if ns.fail_on_regression and diff.has_regression else 0


def add_report_parser(commands: Commands) -> None:
    """``qualspec report RUN --html PATH``."""
    report = commands.add_parser(
        "report", help="write the HTML report of a run (run id, prefix or results JSON)"
    )
    report.add_argument("run_id", metavar="RUN", help="run id, unique id prefix, or results .json")
    report.add_argument(
        "--html",
        required=True,
        metavar="PATH",
        help="write the self-contained HTML report (offline, no script) to PATH",
    )
    add_db(report)
    report.set_defaults(handler=cmd_report)


def cmd_report(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Write the HTML report of a stored run (or of a results JSON file)."""
    from qualspec.report import write_html

    run = _load(ns.run_id, ns.db)
    write_html(run, ns.html)
    print(f"HTML report: {ns.html}   (run {run.summary.id})")
    return 0
