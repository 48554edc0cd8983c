"""``qualspec labels export|import|list``: people's labels of a run's answers.

``export`` writes the answers to label (CSV for a spreadsheet, or JSON Lines) with their ids
and empty ``score``/``passed`` columns; ``import`` reads the file back, filled in, all or
nothing; ``list`` shows what is stored. Who imported is ``--by``, else ``$QUALSPEC_USER``,
else the OS user.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from qualspec.cli._args import Commands, add_db, add_output, non_negative_int, positive_int

__all__ = ["add_parser", "cmd_labels_export", "cmd_labels_import", "cmd_labels_list"]


def add_parser(commands: Commands) -> None:
    """``qualspec labels export|import|list``."""
    labels = commands.add_parser(
        "labels", help="people's labels of a run's answers: export to label, import, list"
    )
    actions = labels.add_subparsers(dest="labels_command", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="the answers to label: CSV (or .jsonl) with their ids and empty score/passed",
    )
    export.add_argument("run", metavar="RUN", help="run id or unique prefix")
    add_output(
        export,
        "--output",
        hint="the format follows the file's suffix: .csv (default) or .jsonl",
        help="write here (.csv or .jsonl; default: CSV on stdout)",
    )
    export.add_argument("--labeller", default="", metavar="NAME", help="fill the labeller column")
    export.add_argument(
        "--sample", type=positive_int, metavar="N", help="only N answers, drawn at random"
    )
    export.add_argument(
        "--seed", type=non_negative_int, default=0, metavar="S", help="the draw's seed (0)"
    )
    export.set_defaults(handler=cmd_labels_export)
    imp = actions.add_parser(
        "import",
        help="read labels (CSV or JSONL) into the store: all rows or none; again: no change",
    )
    imp.add_argument("run", metavar="RUN", help="run id or unique prefix")
    imp.add_argument("file", metavar="FILE", help="the labels: .csv (, ; or tab) or .jsonl")
    imp.add_argument("--by", metavar="NAME", help="who imports (default: $QUALSPEC_USER or you)")
    imp.set_defaults(handler=cmd_labels_import)
    show = actions.add_parser("list", help="the run's stored labels")
    show.add_argument("run", metavar="RUN", help="run id or unique prefix")
    show.set_defaults(handler=cmd_labels_list)
    for command in (export, imp, show):
        add_db(command)


def cmd_labels_export(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Write the answers to label, one row per answer and criterion."""
    import csv
    import io
    import json

    from qualspec.analysis import LABEL_COLUMNS, label_sheet
    from qualspec.report import write_text_atomic
    from qualspec.store import Store

    with Store.open(ns.db) as store:
        run = store.load_run(ns.run)
    rows = label_sheet(run, labeller=ns.labeller, sample=ns.sample, seed=ns.seed)
    if not rows:
        print(
            f"run {run.summary.id} has no judged answers to label (errors and checks are left out)",
            file=sys.stderr,
        )
        return 1
    path = Path(ns.output) if ns.output else None
    if path is not None and path.suffix.lower() in (".jsonl", ".ndjson"):
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=LABEL_COLUMNS, lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)
        # a byte-order mark: spreadsheets then read the file as UTF-8
        text = ("\ufeff" if path is not None else "") + buffer.getvalue()
    if path is None:
        sys.stdout.write(text)
        return 0
    write_text_atomic(path, text)
    answers = len({row["response_key"] for row in rows})
    print(
        f"wrote {len(rows)} rows ({answers} answers x their criteria) of run {run.summary.id} "
        f"to {path}: fill in score (0-10) and/or passed (pass/fail), then `qualspec labels "
        f"import {run.summary.id} {path}`"
    )
    return 0


def cmd_labels_import(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Read a label file into the store: every row or, when any is wrong, none."""
    from qualspec.analysis import read_labels
    from qualspec.errors import SpecError
    from qualspec.store import Store, reviewer

    path = Path(ns.file)
    with Store.open(ns.db) as store:
        run = store.load_run(ns.run)
        try:
            found = read_labels(path, run)
        except SpecError as exc:
            for issue in exc.issues:
                print(str(issue), file=sys.stderr)
            print(
                f"qualspec: error: {path}: {len(exc.issues)} problem"
                f"{'' if len(exc.issues) == 1 else 's'}: nothing was imported; fix the rows "
                "above and import the file again",
                file=sys.stderr,
            )
            return 2
        counts = store.record_labels(
            run.summary.id,
            found.labels,
            source_name=path.name,
            source_sha256=found.sha256,
            who=ns.by or reviewer(),
        )
    notes = []
    if found.skipped:
        notes.append(f"{found.skipped} rows without a score or passed left out")
    if found.repeated:
        notes.append(f"{found.repeated} repeated rows counted once")
    print(
        f"imported {path.name} into run {run.summary.id}: {counts.added} labels added, "
        f"{counts.changed} changed, {counts.unchanged} unchanged"
        + (f" ({'; '.join(notes)})" if notes else "")
    )
    return 0


def cmd_labels_list(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print the run's stored labels, one line each."""
    from qualspec.store import Store

    with Store.open(ns.db) as store:
        summary = store.get_run(ns.run)
        found = store.labels(summary.id)
    if not found:
        print(
            f"run {summary.id} has no labels: `qualspec labels export {summary.id} -o "
            "labels.csv`, fill it in, then `qualspec labels import`"
        )
        return 0
    for x in found:
        score = "-" if x.score is None else f"{x.score:g}"
        passed = "-" if x.passed is None else ("pass" if x.passed else "fail")
        stamp = "" if x.imported_at is None else x.imported_at.strftime("%Y-%m-%d %H:%M")
        print(
            f"{x.response_key[:12]}  {x.criterion}  score {score}  {passed}  "
            f"labeller {x.labeller or '-'}  imported by {x.imported_by} {stamp} "
            f"from {x.source_name}"
        )
    return 0
