"""``qualspec run``: load, plan, dry-run or execute, record, write results JSON, report.

Exit codes: 0 the run completed (failing scores are results); 1 no cell could be answered
(every candidate call failed), or with ``--fail-on-errors`` some call failed; the results
file is written in every case before the report is printed. Names, paths, ids and model
text are printed literally (never read as rich markup).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qualspec.messages import one_line

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from qualspec.engine import Estimate, Plan
    from qualspec.judges import CriteriaJudge, FieldGrader
    from qualspec.spec import LoadedSuite
    from qualspec.store import RunRecord

__all__ = ["cmd_run"]


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]


def build_plan(ns: argparse.Namespace) -> tuple[LoadedSuite, Plan]:
    """Load the suite and expand it with the command line's filters and overrides."""
    from qualspec.engine import expand, parse_temperatures
    from qualspec.spec import load_suite

    suite = load_suite(ns.suite)
    plan = expand(
        suite,
        candidates=_names(ns.candidates),
        roles=_names(ns.roles),
        scenarios=_names(ns.scenarios),
        temperatures=parse_temperatures(ns.temps) if ns.temps else None,
        runs=ns.runs,
        model=ns.model,
    )
    # the library checks the judge and threshold here, and what there is to judge in
    # check_plan: Python and the command line refuse the same values
    return suite, plan.with_judge(model=ns.judge or None, threshold=ns.threshold)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _say(console: Console, *parts: str | tuple[str, str]) -> None:
    """Print one line of plain strings and ``(text, style)`` pairs, never read as markup."""
    from rich.text import Text

    text = Text()
    for part in parts:
        if isinstance(part, str):
            text.append(part)
        else:
            text.append(part[0], part[1])
    console.print(text, soft_wrap=True)  # one line, never broken (piped output, ids, paths)


def cmd_run(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Entry of ``qualspec run``."""
    from rich.console import Console

    from qualspec.engine import estimate
    from qualspec.providers import PriceTable

    suite, plan = build_plan(ns)
    from qualspec.engine import check_plan

    check_plan(suite, plan, judge=not ns.no_judge)  # unknown providers, missing packages
    console = Console(highlight=False)
    for warning in plan.warnings:  # at plan time, before any call (and in a dry run)
        _say(console, ("warning:", "yellow"), f" {warning}")
    gc.freeze()  # the suite, the plan and what they imported: see below
    cache_ttl = _cache_ttl(ns.cache_ttl)
    prices = PriceTable.load(Path(ns.prices) if ns.prices else None)
    if ns.dry_run:
        judge = not ns.no_judge
        calibrate = judge and not getattr(ns, "no_calibration", False)
        with _calibration_cache(ns.db, calibrate) as calibrated:
            est = estimate(plan, prices, judge=judge, calibrate=calibrate, calibrated=calibrated)
        _print_dry_run(plan, est, console, judge=judge, retries=ns.retries)
        return 0

    from qualspec.analysis import analyze_run
    from qualspec.engine import ExecuteOptions, RetryPolicy, RunOutcome, Session, run_sync
    from qualspec.report import (
        PromptRefs,
        default_results_path,
        prompt_refs,
        render_run,
        run_to_dict,
        write_json_atomic,
    )

    options = ExecuteOptions(
        cache_ttl=cache_ttl,
        max_concurrency=ns.max_concurrency,
        timeout=ns.timeout,
        retry=RetryPolicy(max_attempts=max(0, ns.retries) + 1),
        use_cache=not ns.no_cache,
        refresh=ns.refresh,
        refresh_kinds=("reference",) if getattr(ns, "refresh_reference", False) else (),
        max_cost=ns.max_cost,
        judge=not ns.no_judge,
        store_retry_s=ns.store_retry,
        calibrate=not getattr(ns, "no_calibration", False),
    )

    async def main() -> tuple[RunOutcome, str, PromptRefs]:
        async with Session(db=ns.db, options=options, prices=ns.prices) as session:
            with _LazyProgress(plan, judge=not ns.no_judge, quiet=ns.quiet) as progress:
                outcome = await session.run_plan(
                    suite, plan, resume=ns.resume, progress=progress, argv=list(argv)
                )
            refs = await asyncio.to_thread(prompt_refs, session.store, outcome.record)
            return outcome, session.store.url_for_display, refs

    # What is imported and built so far (the store's SQLAlchemy too, imported here) lives
    # until the process ends: frozen, the collector never walks it (unfrozen, it walked
    # these objects twice per run: 20-30 ms of CPU). Objects made later are collected.
    from qualspec.store import Store  # noqa: F401 - imported before the freeze

    gc.freeze()
    outcome, db_display, refs = run_sync(main)
    for warning in outcome.warnings:
        if warning in plan.warnings:  # said before the run
            continue
        _say(console, ("warning:", "yellow"), f" {warning}")
    # the results file first: whatever happens to the report, the results are kept
    run_id = outcome.record.summary.id
    path = (
        Path(ns.output)
        if ns.output
        else default_results_path(
            outcome.record.summary.suite_name, datetime.now(UTC), ns.results_dir, run_id=run_id
        )
    )
    analysis = analyze_run(outcome.record)  # once, for the file and both reports
    write_json_atomic(path, run_to_dict(outcome.record, refs, analysis=analysis))
    if ns.html:
        from qualspec.report import write_html

        write_html(outcome.record, ns.html, prices=prices, analysis=analysis)
    render_run(
        outcome.record,
        console,
        show_responses=ns.show_responses,
        analysis=analysis,
        prompts=refs,
        verbose=bool(getattr(ns, "verbose", 0)),
    )
    stats = outcome.stats
    from qualspec.analysis import run_totals
    from qualspec.report import cache_phrase

    # calls made here; what came from the cache is counted from the stored records, as the
    # results file (cached_responses, cached_judgments) and the HTML report count it
    _say(
        console,
        ("Calls:", "bold"),
        f" {stats.candidate_calls} candidate, {stats.judge_calls} judge"
        + (f", {stats.reference_calls} reference" if stats.reference_calls else "")
        + f" made; {cache_phrase(run_totals(outcome.record))}"
        + (f" (saved ${stats.saved_usd:.4f})" if stats.saved_usd else ""),
    )
    _say(console, f"Results: {path}   (run id {outcome.run_id}, database {db_display})")
    if ns.html:
        _say(console, f"HTML report: {ns.html}")
    if outcome.status == "budget_exceeded":
        _say(
            console,
            (
                f"Stopped at the budget of ${ns.max_cost:.2f}; "
                f"{_plural(stats.skipped_for_budget, 'call')} not made. Continue with: "
                f"qualspec run {ns.suite} --resume {outcome.run_id} --max-cost <more>",
                "yellow",
            ),
        )
    code = _exit_code(outcome.record, fail_on_errors=getattr(ns, "fail_on_errors", False))
    if code == 0 and getattr(ns, "strict", False) and outcome.judge_failures:
        print(f"qualspec: --strict: {outcome.judge_failures[0]}", file=sys.stderr)
        code = 1
    return code


def _exit_code(record: RunRecord, *, fail_on_errors: bool) -> int:
    """1 when no cell could be answered, or (``--fail-on-errors``) when a call failed."""

    responses = [r for r in record.responses if r.kind == "candidate"]
    failed = [r for r in responses if r.error is not None]
    if responses and len(failed) == len(responses):
        print(
            f"qualspec: run failed: no cell could be answered ({_plural(len(failed), 'call')} "
            f"failed; first error: {one_line(failed[0].error or '', 300)})",
            file=sys.stderr,
        )
        return 1
    judge_errors = [j for j in record.judgments if j.error is not None]
    if fail_on_errors and (failed or judge_errors):
        what = []
        if failed:
            what.append(f"{_plural(len(failed), 'candidate call')} failed")
        if judge_errors:
            what.append(f"{_plural(len(judge_errors), 'judgment')} failed")
        print(f"qualspec: errors in the run (--fail-on-errors): {', '.join(what)}", file=sys.stderr)
        return 1
    return 0


def _cache_ttl(values: list[str]) -> dict[str, float | None]:
    from qualspec.errors import ConfigError

    ttl: dict[str, float | None] = {"candidate": None, "judge": None, "reference": 86400.0}
    for value in values:
        kind, sep, seconds = value.partition("=")
        if not sep or kind not in ttl:
            raise ConfigError(
                f"--cache-ttl {value!r}: write KIND=SECONDS with KIND one of "
                f"{', '.join(ttl)}, e.g. --cache-ttl candidate=3600"
            )
        if seconds.strip().lower() in ("none", "forever"):
            ttl[kind] = None
            continue
        try:
            ttl[kind] = float(seconds)
        except ValueError:
            raise ConfigError(
                f"--cache-ttl {value!r}: SECONDS must be a number or 'none'"
            ) from None
    return ttl


class _LazyProgress:
    """The progress bars, drawn from the first progress report on.

    Errors found before the run really starts (an unknown run id for ``--resume``, a
    missing key) are printed alone, with no bar above them.
    """

    def __init__(self, plan: Plan, *, judge: bool, quiet: bool) -> None:
        self._plan = plan
        self._judge = judge
        self._quiet = quiet
        self._bar: Progress | None = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> _LazyProgress | None:
        return None if self._quiet else self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _start(self) -> Progress:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        bar = Progress(
            TextColumn("{task.description:<10}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._tasks["candidate"] = bar.add_task("answers", total=len(self._plan.items))
        compared = any(j.type == "comparative" for j in self._plan.judges)
        if self._judge and (self._plan.judge_calls or compared):  # the run sets the total
            self._tasks["judge"] = bar.add_task("judgments", total=self._plan.judge_calls)
        bar.start()
        self._bar = bar
        return bar

    def __call__(self, kind: str, n: int) -> None:
        bar = self._bar if self._bar is not None else self._start()
        tasks = self._tasks
        if kind.startswith("total:"):
            task = tasks.get(kind.removeprefix("total:"))
            if task is not None:
                bar.update(task, total=n)
        elif n and kind in tasks:
            bar.advance(tasks[kind], n)


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
    roles = ", ".join(plan.roles) if plan.roles else "(none)"
    from qualspec.analysis import temperature_label

    temps = ", ".join(temperature_label(t) for t in plan.temperatures)
    if plan.temperatures == (None,):
        temps += " (none sent: each provider's own)"
    _say(console, ("Dry run", "bold"), ": nothing will be called.")
    _say(console, f"  candidates   {len(plan.candidates)}: {', '.join(plan.candidates)}")
    _say(console, f"  roles        {len(plan.roles)}: {roles}")
    _say(console, f"  scenarios    {len(plan.scenarios)}: {', '.join(plan.scenarios)}")
    rows = len({(i.scenario, i.input_id) for i in plan.items if i.input_id is not None})
    _say(
        console,
        f"  inputs       {rows} (rows over all scenarios)" if rows else "  inputs       none",
    )
    _say(console, f"  temperatures {len(plan.temperatures)}: {temps}")
    _say(console, f"  runs         {plan.runs} per temperature")
    used = plan.run_evaluators()
    judges = [j for j in plan.judges if j.type != "comparative" and j in used]
    compared = [j for j in plan.judges if j.type == "comparative"]
    if not judge:
        _say(console, "  judge        none (--no-judge)")
    elif len(judges) > 1:
        names = ", ".join(
            f"{j.label} ({j.type}, {j.model or plan.judge_model}, pass at {_pass_mark(j)})"
            for j in judges
        )
        _say(console, f"  judges       {len(judges)}: {names}")
    elif judges and judges[0].type == "field_grader":
        grader = judges[0]
        mark = _pass_mark(grader)
        _say(console, f"  grader       {grader.model or plan.judge_model} (pass at {mark})")
    else:
        _say(console, f"  judge        {plan.judge_model} (pass at {plan.threshold:g}/10)")
    if judge and compared:
        names = ", ".join(
            f"{c.label} ({c.options.get('compare')} within {c.options.get('within')}, "
            f"{c.model or plan.judge_model}{', debias' if c.options.get('debias') else ''})"
            for c in compared
        )
        _say(console, f"  comparisons  {len(compared)}: {names}")
    _say(console, ("Candidate calls:", "bold"), f" {est.candidate_calls}")
    if est.reference_calls:
        _say(console, ("Reference calls:", "bold"), f" {est.reference_calls}")
    if judge and (est.judge_calls or not est.grader_calls):
        _say(
            console,
            ("Judge calls:", "bold"),
            f" {est.judge_calls} (before parse retries)"
            + _at_most(est.judge_calls, est.max_judge_calls),
        )
    if judge and est.grader_calls:
        _say(
            console,
            ("Grader calls:", "bold"),
            f" at most {est.grader_calls} (one per answer; none where rules decide every "
            "field)" + _at_most(est.grader_calls, est.max_grader_calls),
        )
    for group in est.groups:
        skipped = (
            f"; {_plural(group.skipped, 'group')} of fewer than 2 answers skipped"
            if group.skipped
            else ""
        )
        _say(
            console,
            ("Comparison calls:", "bold"),
            f" {group.calls} ({group.name}: {_plural(group.groups, 'group')}{skipped})"
            + _at_most(group.calls, group.max_calls),
        )
    for cal in est.calibrations:
        known = "known field pair" if cal.role == "grader" else "known pair"
        _say(
            console,
            ("Calibration calls:", "bold"),
            f" {cal.calls} ({cal.role} {cal.model} on {_plural(cal.pairs, known)}, "
            "before the run, once: --no-calibration skips it)" + _at_most(cal.calls, cal.max_calls),
        )
    checks = sum(len(item.checks) for item in plan.items)
    if checks:
        _say(console, ("Checks:", "bold"), f" {checks} (expect:, no model call)")
    retried = "" if retries == 0 else f"; a failed call is retried up to {retries} times on top"
    if est.max_calls > est.calls:
        total = (
            f" {est.calls} to {est.max_calls} (the most when every verdict has to be asked "
            f"again, as often as its evaluator allows; fewer where answers are cached{retried})"
        )
    else:
        total = f" {est.calls} (fewer where answers are cached{retried})"
    _say(console, ("Total calls:", "bold"), total)
    _say(
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
        _say(
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
    _say(console, ("Estimated cost:", "bold"), " " + cost_text)


def _at_most(calls: int, most: int) -> str:
    """``, up to N with re-asks`` when re-asks can add calls."""
    return f", up to {most} with re-asks" if most > calls else ""


def _pass_mark(config: Any) -> str:
    """An evaluator's pass mark as shown: 0-10, or 0-100 for the field grader."""
    if config.type == "field_grader":
        return f"{float(config.options.get('threshold', 80)):g}/100"
    return f"{config.threshold:g}"
