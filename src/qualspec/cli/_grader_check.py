"""``qualspec grader-check RUN``: re-grade a run's graded answers N times, report the spread.

The run's answers and references come from the store; what its evaluators read of each
answer's call (prompt, criteria, input, the reference it depends on) comes from its plan,
rebuilt from the suite file the run recorded: with the recorded ``qualspec run`` command
line when there is one (filters, ``--model``, ``--judge``), else the recorded dimensions.
The result is printed and recorded in the run's metadata (``grader_check``), where
``qualspec insights`` reads it; the re-grading calls are a run of their own, named
``grader-check RUN`` (metadata ``kind: grader_check``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qualspec.cli._args import Commands, add_db, non_negative_float, positive_float, positive_int

if TYPE_CHECKING:
    from qualspec.engine import Plan
    from qualspec.judges import GraderCheck
    from qualspec.spec import EvaluatorConfig, LoadedSuite
    from qualspec.store import RunRecord

__all__ = ["add_parser", "cmd_grader_check"]


def _rebuild(run: RunRecord) -> tuple[LoadedSuite, Plan]:
    """The suite and plan that made ``run`` (see the module docstring)."""
    from qualspec.engine import expand
    from qualspec.errors import ConfigError
    from qualspec.spec import load_suite

    meta = run.summary.metadata or {}
    path = meta.get("suite_path")
    if not isinstance(path, str) or not Path(path).is_file():
        where = f" ({path})" if isinstance(path, str) else ""
        raise ConfigError(
            f"run {run.summary.id}: its suite file{where} is gone; grader-check re-grades "
            "with the suite's evaluators: restore the file at that path"
        )
    argv = meta.get("argv")
    if isinstance(argv, list) and argv[:1] == ["run"]:
        from qualspec.cli._app import build_parser
        from qualspec.cli._run import build_plan

        try:
            ns = build_parser().parse_args([str(a) for a in argv])
        except SystemExit:  # a recorded command line this version does not read
            ns = None
        if ns is not None:
            ns.suite = path
            return build_plan(ns)
    suite = load_suite(path)
    dims = meta.get("dimensions")
    dims = dims if isinstance(dims, Mapping) else {}
    temps = dims.get("temperatures")
    runs = dims.get("runs")
    numbers: list[float] | None = None
    if isinstance(temps, list) and temps and all(isinstance(t, int | float) for t in temps):
        numbers = [float(t) for t in temps]
    plan = expand(
        suite,
        temperatures=numbers,
        runs=runs if isinstance(runs, int) and runs > 0 else None,
    )
    return suite, plan


def _configs(run: RunRecord, plan: Plan) -> list[EvaluatorConfig]:
    """The plan's evaluators with the model the run recorded for each (``--judge``); the
    threshold decides pass or fail only, not the score that is re-graded."""
    recorded = {
        e.get("name"): e
        for e in (run.summary.metadata or {}).get("evaluators") or []
        if isinstance(e, Mapping)
    }
    out = []
    for config in plan.run_evaluators(judge=True):
        seen = recorded.get(config.label) or {}
        update: dict[str, Any] = {}
        if isinstance(seen.get("model"), str):
            update["model"] = seen["model"]
        out.append(config.model_copy(update=update) if update else config)
    return out


def _print(result: GraderCheck, model: str) -> None:
    from qualspec.judges import score_text

    what = "field grades, 0-100" if result.source == "field_grades" else "criteria, 0-10"
    print(
        f"Grader check: run {result.run_id} ({what}); {result.repeats} re-grades of "
        f"{len(result.items)} items by {model}"
    )
    if result.skipped:
        print(f"  {result.skipped} items skipped: their answer or work item is not in the plan")
    fields = result.source == "field_grades"
    head = ("item", "recorded", "re-grades", "spread", "std")
    rows: list[tuple[str, ...]] = [(*head, "widest field", "") if fields else (*head, "")]
    for item in sorted(result.items, key=lambda i: -i.worst):
        widest = item.widest_field
        cells: tuple[str, ...] = (
            item.label,
            score_text(item.original) if item.original is not None else "-",
            ", ".join(score_text(s) for s in item.scores),
            "-" if item.spread is None else f"{item.spread:.1f}",
            "-" if item.std is None else f"{item.std:.2f}",
        )
        if fields:
            cells = (*cells, "-" if widest is None else f"{widest[0]} {widest[1]:.1f}")
        rows.append((*cells, "FLAGGED" if item.flagged else ""))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())

    def num(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}"

    flagged = len(result.flagged)
    largest_field = (
        f", largest field spread {num(result.largest_field_spread)}"
        if result.largest_field_spread is not None
        else ""
    )
    print(
        f"Overall: mean spread {num(result.mean_spread)}, mean std "
        f"{'-' if result.mean_std is None else f'{result.mean_std:.2f}'}, largest spread "
        f"{num(result.largest_spread)}{largest_field}; unscored re-grades: {result.unscored} "
        "(spreads include the recorded grade)"
    )
    scope = "item or field" if fields else "item"
    if flagged:
        print(
            f"INCONSISTENT: {flagged} of {len(result.items)} items spread more than "
            f"{result.max_spread:g} points (the item or one of its fields, the recorded grade "
            "included): make the grading prompt less subjective, lower the grader's "
            "temperature"
        )
    else:
        print(
            f"Consistent: every {scope} within {result.max_spread:g} points over the "
            "recorded grade and its re-grades"
        )


def add_parser(commands: Commands) -> None:
    """``qualspec grader-check RUN``."""
    gc_ = commands.add_parser(
        "grader-check",
        help="re-grade a run's graded answers N times: is the grader consistent?",
    )
    gc_.add_argument("run_id", metavar="RUN", help="run id or unique id prefix")
    gc_.add_argument(
        "--repeats", type=positive_int, default=3, metavar="N", help="re-grade N times (default 3)"
    )
    gc_.add_argument(
        "--max-spread",
        type=non_negative_float,
        default=None,
        metavar="POINTS",
        help="flag items whose scores spread more than this (default 5 on the 0-100 field "
        "scale, 0.5 on the 0-10 criteria scale)",
    )
    gc_.add_argument("--max-cost", type=positive_float, metavar="USD", help="stop at this cost")
    gc_.add_argument("--format", choices=["text", "json"], default="text")
    add_db(gc_)
    gc_.set_defaults(handler=cmd_grader_check)


def cmd_grader_check(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Re-grade a run's items ``--repeats`` times, print and record the spread."""
    import asyncio
    import json

    from qualspec.engine import Session, run_sync
    from qualspec.errors import ConfigError
    from qualspec.judges import grader_check, grader_check_items
    from qualspec.store import Store

    with Store.open(ns.db) as store:
        run = store.load_run(ns.run_id)
    _, records = grader_check_items(run)
    if not records:
        raise ConfigError(
            f"run {run.summary.id} has no graded answers to re-grade (no field grades, no "
            "criteria judgments): run it with a grader or judge first"
        )
    suite, plan = _rebuild(run)
    configs = _configs(run, plan)
    items = {item.key: item for item in plan.items}

    async def main() -> GraderCheck:
        async with Session(db=ns.db, max_cost=ns.max_cost) as session:
            # the re-grades are a run of their own, named for what it is (runs list)
            described = {
                "kind": "grader_check",
                "run": run.summary.id,
                "repeats": ns.repeats,
                "max_spread": ns.max_spread,
            }
            name = f"grader-check {run.summary.id}"
            async with session.recording(name, described) as check_id:
                result = await grader_check(
                    session,
                    run,
                    items,
                    configs,
                    repeats=ns.repeats,
                    max_spread=ns.max_spread,
                    providers=suite.evaluation.providers,
                )
                await asyncio.to_thread(
                    session.store.update_run_metadata, check_id, {"grader_check": result.summary()}
                )
            await asyncio.to_thread(
                session.store.update_run_metadata,
                run.summary.id,
                {"grader_check": result.summary()},
            )
            return result

    result = run_sync(main)
    if ns.format == "json":
        data = result.summary() | {
            "run_id": result.run_id,
            "items_detail": [
                {
                    "label": i.label,
                    "evaluator": i.evaluator,
                    "response_key": i.response_key,
                    "criterion": i.criterion,
                    "original": i.original,
                    "scores": list(i.scores),
                    "spread": i.spread,
                    "std": i.std,
                    "field_spreads": dict(i.field_spreads),
                    "flagged": i.flagged,
                }
                for i in result.items
            ],
        }
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    used = {r.evaluator for r in records}
    models = sorted({c.model or "?" for c in configs if c.label in used})
    _print(result, ", ".join(models) or "?")
    return 0
