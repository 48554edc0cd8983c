"""``qualspec agreement RUN``: how far a run's judges can be trusted, per criterion.

One function per section, each giving its text lines and its JSON part: judge vs people
(``_agreement_people``: each judge's and the panel's agreement with the run's human
labels, and which judge to trust for which criterion).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from qualspec.cli._args import Commands, add_db
from qualspec.cli._history import _load

__all__ = ["add_parser", "cmd_agreement"]


def add_parser(commands: Commands) -> None:
    """``qualspec agreement RUN [--format text|json]``."""
    agreement = commands.add_parser(
        "agreement",
        help="per criterion: each judge's agreement with people's labels (alpha, rho, "
        "exact/within-1, pass/fail) and which judge to trust",
    )
    agreement.add_argument(
        "run_id", metavar="RUN", help="run id, unique id prefix, or results .json"
    )
    agreement.add_argument("--format", choices=["text", "json"], default="text")
    add_db(agreement)
    agreement.set_defaults(handler=cmd_agreement)


def cmd_agreement(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print each section of the run's agreement."""
    from qualspec.cli._agreement_people import judge_vs_people

    run = _load(ns.run_id, ns.db)
    lines, data = judge_vs_people(run, ns.db)
    if ns.format == "json":
        out = {"run_id": run.summary.id, "suite": run.summary.suite_name, **data}
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0
    head = f"Agreement in run {run.summary.id} (suite {run.summary.suite_name})"
    sys.stdout.write("\n".join([head, "", *lines]) + "\n")
    return 0
