"""``qualspec judge-check``: how well a judge separates known good answers from bad ones.

A check is recorded as a run of its own named ``judge-check <PROVIDER/MODEL>`` (metadata
``kind: judge_check``, with the result), so ``qualspec runs list`` says what it was; a
field grader's (``--grader``) as ``judge-check --grader <PROVIDER/MODEL>`` (``kind:
grader_judge_check``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from qualspec.cli._args import Commands, add_db, positive_int

if TYPE_CHECKING:
    from qualspec.engine import Session
    from qualspec.judges import Calibration

__all__ = ["add_parser", "cmd_judge_check"]


def add_parser(commands: Commands) -> None:
    """``qualspec judge-check [--judge | --grader PROVIDER/MODEL]``."""
    jc = commands.add_parser(
        "judge-check",
        help="calibrate a judge on known good and bad answers, or a field grader on known "
        "field values (--grader): separation",
    )
    who = jc.add_mutually_exclusive_group()
    who.add_argument(
        "--judge",
        action="append",
        default=None,
        metavar="PROVIDER/MODEL",
        help="the judge (default local/smollm2); give it 2+ times for a panel: each judge is "
        "checked, then the combined panel (--combine)",
    )
    who.add_argument(
        "--grader",
        default=None,
        metavar="PROVIDER/MODEL",
        help="calibrate this reference field grader instead: equal-meaning values against "
        "clearly wrong ones",
    )
    jc.add_argument(
        "--repeats", type=positive_int, default=1, metavar="N", help="score each answer N times"
    )
    jc.add_argument(
        "--pairs", type=positive_int, default=None, metavar="N", help="the first N pairs only"
    )
    jc.add_argument(
        "--mode",
        choices=("per_criterion", "all_criteria"),
        default="per_criterion",
        help="the judge's mode (as judge.mode in a suite)",
    )
    jc.add_argument(
        "--combine",
        choices=("median", "mean", "majority", "min"),
        default="median",
        help="how a panel's scores combine (as judge.combine in a suite; default median)",
    )
    jc.add_argument("--json", action="store_true", help="print the result as JSON")
    add_db(jc)
    jc.set_defaults(handler=cmd_judge_check)


def cmd_judge_check(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Score the built-in known pairs with the judge and print its separation."""
    from qualspec.judges import SEPARATION_THRESHOLD, CriteriaJudge, calibrate
    from qualspec.providers import split_address
    from qualspec.spec import DEFAULT_JUDGE_MODEL, EvaluatorConfig

    if getattr(ns, "grader", None):
        return _grader_check(ns)
    judges = list(dict.fromkeys(ns.judge or ()))
    if len(judges) > 1:
        from qualspec.cli._panel_check import panel_check

        return panel_check(ns, judges)
    model = judges[0] if judges else DEFAULT_JUDGE_MODEL
    split_address(model)  # a malformed address is one line, exit 2
    judge = CriteriaJudge.from_config(EvaluatorConfig(type="criteria", model=model, mode=ns.mode))

    described = {"kind": "judge_check", "judge": model, "mode": ns.mode}
    result = _recorded_check(
        ns,
        model,
        f"judge-check {model}",
        described,
        judge.name,
        lambda session: calibrate(session, judge, pairs=ns.pairs, repeats=ns.repeats),
    )
    if _printed_json(ns, result):
        return 0
    print(f"Judge calibration: {model} ({result.n_pairs} known pairs, {result.repeats} repeat(s))")
    print(f"  {'domain':<16}{'separated':>10}")
    for domain, (separated, n) in sorted(result.by_domain().items()):
        print(f"  {domain:<16}{separated:>6} of {n}")
    gap, spread = _gap_and_spread(result)
    print(
        f"Separation: {result.separation:.2f} (threshold {SEPARATION_THRESHOLD:.2f})   "
        f"mean gap: {gap}   spread on repeats: {spread}   unscored: {result.n_unscored}"
    )
    print(result.verdict)
    return 0


def _grader_check(ns: argparse.Namespace) -> int:
    """``judge-check --grader MODEL``: the field grader on the known field pairs."""
    from qualspec.judges import SEPARATION_THRESHOLD, FieldGrader, calibrate_grader
    from qualspec.providers import split_address

    model = str(ns.grader)
    split_address(model)  # a malformed address is one line, exit 2
    grader = FieldGrader(name="field_grader", model=model, fields={})

    described = {"kind": "grader_judge_check", "grader": model}
    result = _recorded_check(
        ns,
        model,
        f"judge-check --grader {model}",
        described,
        grader.name,
        lambda session: calibrate_grader(session, grader, pairs=ns.pairs, repeats=ns.repeats),
    )
    if _printed_json(ns, result):
        return 0
    print(
        f"Grader calibration: {model} ({result.n_pairs} known field pairs, "
        f"{result.repeats} repeat(s)): an equal-meaning value against a wrong one"
    )
    print(f"  {'pair':<26}{'equal meaning':>14}{'wrong':>8}")
    for pair in result.pairs:
        good = ", ".join("-" if v is None else f"{v:g}" for v in pair.good)
        bad = ", ".join("-" if v is None else f"{v:g}" for v in pair.bad)
        mark = "" if pair.separated else "  NOT SEPARATED"
        print(f"  {pair.id:<26}{good:>14}{bad:>8}{mark}")
    gap, spread = _gap_and_spread(result)
    print(
        f"Separation: {result.separation:.2f} (threshold {SEPARATION_THRESHOLD:.2f})   "
        f"mean gap: {gap} of 100   spread on repeats: {spread}   ungraded: "
        f"{result.n_unscored}"
    )
    print(result.verdict)
    return 0


def _recorded_check(
    ns: argparse.Namespace,
    model: str,
    title: str,
    described: Mapping[str, object],
    name: str,
    check: Callable[[Session], Awaitable[Calibration]],
) -> Calibration:
    """Run ``check`` in a session, recorded as a run named ``title`` whose metadata is
    ``described`` (with ``pairs`` and ``repeats``) and the result under ``name``."""
    import asyncio

    from qualspec.engine import Session, run_sync
    from qualspec.providers import split_address

    async def main() -> Calibration:
        async with Session(db=ns.db) as session:
            session.calls.providers([split_address(model)[0]])  # an unknown provider: exit 2
            metadata = {**described, "pairs": ns.pairs, "repeats": ns.repeats}
            async with session.recording(title, metadata) as run_id:
                found = await check(session)
                await asyncio.to_thread(
                    session.store.update_run_metadata,
                    run_id,
                    {"judge_calibration": {name: found.summary()}},
                )
            return found

    return run_sync(main)


def _printed_json(ns: argparse.Namespace, result: Calibration) -> bool:
    """With ``--json``, print the result as one JSON line and say so."""
    import json

    if not ns.json:
        return False
    sys.stdout.write(json.dumps(result.summary() | {"by_domain": result.by_domain()}) + "\n")
    return True


def _gap_and_spread(result: Calibration) -> tuple[str, str]:
    """The mean gap and the spread on repeats, as the summary line prints them."""
    gap = "n/a" if result.mean_gap is None else f"{result.mean_gap:+.1f}"
    spread = "n/a (use --repeats 2+)" if result.spread is None else f"{result.spread:.2f}"
    return gap, spread
