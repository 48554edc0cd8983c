"""``qualspec agreement RUN``: how far a run's judges can be trusted, per criterion.

Each section is made by its own module (``_agreement_people``: agreement with people's
labels); this one adds the command and prints the sections as text or JSON.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from qualspec.cli._args import Commands, add_db, add_output

__all__ = ["add_parser", "cmd_agreement"]


def add_parser(commands: Commands) -> None:
    """``qualspec agreement RUN [--format text|json] [-o PATH]``."""
    agreement = commands.add_parser(
        "agreement",
        help="per criterion: each judge's agreement with people's labels (alpha, rho, "
        "exact/within-1, pass/fail) and which judge to trust",
    )
    agreement.add_argument("run", metavar="RUN", help="run id or unique prefix")
    agreement.add_argument("--format", choices=["text", "json"], default="text")
    add_output(
        agreement,
        "--output",
        hint="choose the format with --format text|json",
        help="also write the agreement as JSON to this file",
    )
    add_db(agreement)
    agreement.set_defaults(handler=cmd_agreement)


def cmd_agreement(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print the run's agreement sections."""
    import json

    from qualspec.cli._agreement_people import people_dict, people_lines, people_report
    from qualspec.store import Store

    with Store.open(ns.db) as store:
        run = store.load_run(ns.run)
        people = people_report(store, run)
    data = {"run_id": run.summary.id, "people": people_dict(people)}
    if ns.output:
        from qualspec.report import write_json_atomic

        write_json_atomic(ns.output, data)
    if ns.format == "json":
        print(json.dumps(data, indent=2))
    else:
        print("\n".join(people_lines(people, run.summary.id)))
    return 0
