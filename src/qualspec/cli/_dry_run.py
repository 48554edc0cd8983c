"""``qualspec run --dry-run``: the matrix, the calls and their cost; nothing is called."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from qualspec.cli._console import plural, say

if TYPE_CHECKING:
    from rich.console import Console

    from qualspec.engine import Estimate, Plan
    from qualspec.judges import CriteriaJudge, FieldGrader
    from qualspec.providers import PriceTable

__all__ = ["dry_run"]


def dry_run(ns: argparse.Namespace, plan: Plan, prices: PriceTable, console: Console) -> None:
    """Estimate the plan's calls and cost (calibrations already cached are not counted)
    and print them."""
    from qualspec.engine import estimate

    judge = not ns.no_judge
    calibrate = judge and not getattr(ns, "no_calibration", False)
    with _calibration_cache(ns.db, calibrate) as calibrated:
        est = estimate(plan, prices, judge=judge, calibrate=calibrate, calibrated=calibrated)
    _print_dry_run(plan, est, console, judge=judge, retries=ns.retries)


@contextlib.contextmanager
def _calibration_cache(
    db: str | None, calibrate: bool
) -> Iterator[Callable[[CriteriaJudge | FieldGrader, int], bool] | None]:
    """Whether a judge's calibration is cached (then a run makes none), for the dry run.

    Read from the store when there is one; a dry run creates no database (a store that
    does not exist yet, or cannot be reached, holds nothing: every calibration is
    counted). Without ``calibrate`` nothing is opened.
    """
    from qualspec.errors import StoreError
    from qualspec.store import Store, database_exists

    if not calibrate or not database_exists(db):
        yield None
        return
    from qualspec.judges import CriteriaJudge, cached_calibration, cached_grader_calibration

    try:
        opened = Store.open(db)
    except StoreError:
        yield None
        return
    with opened as store:

        def calibrated(judge: CriteriaJudge | FieldGrader, pairs: int) -> bool:
            # as the run looks: the full set (qualspec judge-check [--grader]), then these
            if not isinstance(judge, CriteriaJudge):
                return (
                    cached_grader_calibration(store, judge) is not None
                    or cached_grader_calibration(store, judge, pairs=pairs) is not None
                )
            return (
                cached_calibration(store, judge) is not None
                or cached_calibration(store, judge, pairs=pairs) is not None
            )

        yield calibrated


def _print_dry_run(
    plan: Plan, est: Estimate, console: Console, *, judge: bool = True, retries: int = 3
) -> None:
    _print_matrix(plan, console)
    _print_evaluators(plan, console, judge=judge)
    _print_calls(plan, est, console, judge=judge, retries=retries)
    _print_cost(est, console)


def _print_matrix(plan: Plan, console: Console) -> None:
    """What the run would cover: candidates, roles, scenarios, inputs, temperatures, runs."""
    roles = ", ".join(plan.roles) if plan.roles else "(none)"
    from qualspec.analysis import temperature_label

    temps = ", ".join(temperature_label(t) for t in plan.temperatures)
    if plan.temperatures == (None,):
        temps += " (none sent: each provider's own)"
    say(console, ("Dry run", "bold"), ": nothing will be called.")
    say(console, f"  candidates   {len(plan.candidates)}: {', '.join(plan.candidates)}")
    say(console, f"  roles        {len(plan.roles)}: {roles}")
    say(console, f"  scenarios    {len(plan.scenarios)}: {', '.join(plan.scenarios)}")
    rows = plan.rows
    say(
        console,
        f"  inputs       {rows} (rows over all scenarios)" if rows else "  inputs       none",
    )
    say(console, f"  temperatures {len(plan.temperatures)}: {temps}")
    say(console, f"  runs         {plan.runs} per temperature")


def _who(config: Any, plan: Plan) -> str:
    """A judge's model, or its panel: ``panel median of a, b, c``."""
    if getattr(config, "panel", None):
        return f"panel {config.combine} of {', '.join(m.label for m in config.panel)}"
    return str(config.model or plan.judge_model)


def _print_evaluators(plan: Plan, console: Console, *, judge: bool) -> None:
    """The judges, the field grader and the comparisons the run would use."""
    used = plan.run_evaluators()
    judges = [j for j in plan.judges if j.type != "comparative" and j in used]
    compared = [j for j in plan.judges if j.type == "comparative"]
    if not judge:
        say(console, "  judge        none (--no-judge)")
    elif len(judges) > 1:
        names = ", ".join(
            f"{j.label} ({j.type}, {_who(j, plan)}, pass at {_pass_mark(j)})" for j in judges
        )
        say(console, f"  judges       {len(judges)}: {names}")
    elif judges and judges[0].type == "field_grader":
        grader = judges[0]
        mark = _pass_mark(grader)
        say(console, f"  grader       {grader.model or plan.judge_model} (pass at {mark})")
    else:
        who = _who(judges[0], plan) if judges else plan.judge_model
        say(console, f"  judge        {who} (pass at {plan.threshold:g}/10)")
    if judge and compared:
        names = ", ".join(
            f"{c.label} ({c.options.get('compare')} within {c.options.get('within')}, "
            f"{c.model or plan.judge_model}{', debias' if c.options.get('debias') else ''})"
            for c in compared
        )
        say(console, f"  comparisons  {len(compared)}: {names}")


def _print_calls(plan: Plan, est: Estimate, console: Console, *, judge: bool, retries: int) -> None:
    """The calls of each kind, at least and at most, and their total."""
    say(console, ("Candidate calls:", "bold"), f" {est.candidate_calls}")
    if est.reference_calls:
        say(console, ("Reference calls:", "bold"), f" {est.reference_calls}")
    if judge and (est.judge_calls or not est.grader_calls):
        say(
            console,
            ("Judge calls:", "bold"),
            f" {est.judge_calls} (before parse retries)"
            + _at_most(est.judge_calls, est.max_judge_calls),
        )
    if judge and est.grader_calls:
        say(
            console,
            ("Grader calls:", "bold"),
            f" at most {est.grader_calls} (one per answer; none where rules decide every "
            "field)" + _at_most(est.grader_calls, est.max_grader_calls),
        )
    for group in est.groups:
        skipped = (
            f"; {plural(group.skipped, 'group')} of fewer than 2 answers skipped"
            if group.skipped
            else ""
        )
        say(
            console,
            ("Comparison calls:", "bold"),
            f" {group.calls} ({group.name}: {plural(group.groups, 'group')}{skipped})"
            + _at_most(group.calls, group.max_calls),
        )
    for cal in est.calibrations:
        known = "known field pair" if cal.role == "grader" else "known pair"
        say(
            console,
            ("Calibration calls:", "bold"),
            f" {cal.calls} ({cal.role} {cal.model} on {plural(cal.pairs, known)}, "
            "before the run, once: --no-calibration skips it)" + _at_most(cal.calls, cal.max_calls),
        )
    checks = sum(len(item.checks) for item in plan.items)
    if checks:
        say(console, ("Checks:", "bold"), f" {checks} (expect:, no model call)")
    retried = "" if retries == 0 else f"; a failed call is retried up to {retries} times on top"
    if est.max_calls > est.calls:
        total = (
            f" {est.calls} to {est.max_calls} (the most when every verdict has to be asked "
            f"again, as often as its evaluator allows; fewer where answers are cached{retried})"
        )
    else:
        total = f" {est.calls} (fewer where answers are cached{retried})"
    say(console, ("Total calls:", "bold"), total)


def _print_cost(est: Estimate, console: Console) -> None:
    """The estimated tokens and cost, in all and per model."""
    say(
        console,
        ("Estimated tokens:", "bold"),
        f" {est.input_tokens} in / {est.output_tokens} out"
        + (
            f" (up to {est.max_input_tokens} in / {est.max_output_tokens} out with re-asks)"
            if est.max_calls > est.calls
            else ""
        ),
    )
    for row in est.rows:
        cost = "price unknown" if row.cost_usd is None else f"${row.cost_usd:.4f}"
        calls = "call " if row.calls == 1 else "calls"
        most = ""
        if row.max_calls > row.calls:
            dollars = "" if row.max_cost_usd is None else f", ${row.max_cost_usd:.4f}"
            most = f"  (at most {row.max_calls} calls{dollars})"
        say(
            console,
            f"  {row.kind:<11} {row.model:<24} {row.calls:>5} {calls} "
            f"{row.input_tokens:>8} in {row.output_tokens:>8} out  {cost}{most}",
        )
    low, high = est.cost_usd, est.max_cost_usd
    if low is None or high is None:
        cost_text = "unknown (some model has no price: add it with --prices)"
    elif high > low:
        cost_text = f"${low:.4f} to ${high:.4f} (with every re-ask)"
    else:
        cost_text = f"${low:.4f}"
    say(console, ("Estimated cost:", "bold"), " " + cost_text)


def _at_most(calls: int, most: int) -> str:
    """``, up to N with re-asks`` when re-asks can add calls."""
    return f", up to {most} with re-asks" if most > calls else ""


def _pass_mark(config: Any) -> str:
    """An evaluator's pass mark as shown: 0-10, or 0-100 for the field grader."""
    if config.type == "field_grader":
        return f"{float(config.options.get('threshold', 80)):g}/100"
    return f"{config.threshold:g}"
