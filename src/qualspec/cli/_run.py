"""``qualspec run``: load, plan, dry-run or execute, record, report, write results JSON."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from qualspec.engine._estimate import Estimate
    from qualspec.engine._execute import ProgressFn
    from qualspec.engine._plan import Plan
    from qualspec.spec import LoadedSuite

__all__ = ["cmd_run"]


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]


def build_plan(ns: argparse.Namespace) -> tuple[LoadedSuite, Plan]:
    """Load the suite and expand it with the command line's filters and overrides."""
    from qualspec.engine._plan import expand, parse_temperatures
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
    changes: dict[str, object] = {}
    if ns.judge:
        from qualspec.providers import split_address

        split_address(ns.judge)  # validates the address: one line if malformed
        changes["judge_model"] = ns.judge
    if ns.threshold is not None:
        from qualspec.errors import ConfigError

        if not 0 <= ns.threshold <= 10:
            raise ConfigError(f"--threshold must be between 0 and 10, got {ns.threshold:g}")
        changes["threshold"] = ns.threshold
    if changes:
        plan = dataclasses.replace(plan, **changes)  # type: ignore[arg-type]
    return suite, plan


def cmd_run(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Entry of ``qualspec run``."""
    from rich.console import Console

    from qualspec.engine._estimate import estimate
    from qualspec.providers import PriceTable

    suite, plan = build_plan(ns)
    cache_ttl = _cache_ttl(ns.cache_ttl)
    console = Console(highlight=False)
    prices = PriceTable.load(Path(ns.prices) if ns.prices else None)
    if ns.dry_run:
        _print_dry_run(plan, estimate(plan, prices, judge=not ns.no_judge), console)
        return 0

    from qualspec.engine._execute import ExecuteOptions
    from qualspec.engine._retry import RetryPolicy
    from qualspec.engine._run import execute_plan
    from qualspec.report import default_results_path, render_run, run_to_dict, write_json_atomic
    from qualspec.store import Store

    options = ExecuteOptions(
        cache_ttl=cache_ttl,
        max_concurrency=ns.max_concurrency,
        timeout=ns.timeout,
        retry=RetryPolicy(max_attempts=max(0, ns.retries) + 1),
        use_cache=not ns.no_cache,
        refresh=ns.refresh,
        max_cost=ns.max_cost,
        judge=not ns.no_judge,
    )
    store = Store.open(ns.db)
    try:
        with _progress(plan, ns, judge=not ns.no_judge) as progress:
            outcome = execute_plan(
                suite,
                plan,
                store=store,
                options=options,
                resume=ns.resume,
                argv=list(argv),
                progress=progress,
                prices_path=ns.prices,
            )
        for warning in outcome.warnings:
            console.print(f"[yellow]warning:[/yellow] {warning}")
        render_run(outcome.record, console, show_responses=ns.show_responses)
        path = (
            Path(ns.output)
            if ns.output
            else default_results_path(
                outcome.record.summary.suite_name, datetime.now(UTC), ns.results_dir
            )
        )
        write_json_atomic(path, run_to_dict(outcome.record))
        stats = outcome.stats
        console.print(
            f"[bold]Calls:[/bold] {stats.candidate_calls} candidate, {stats.judge_calls} judge; "
            f"{stats.cached_candidate + stats.cached_judge} from cache "
            f"(saved ${stats.saved_usd:.4f})"
        )
        console.print(
            f"Results: {path}   (run id {outcome.run_id}, database {store.url_for_display})"
        )
        if outcome.status == "budget_exceeded":
            console.print(
                f"[yellow]Stopped at the budget of ${ns.max_cost:.2f}; "
                f"{stats.skipped_for_budget} calls not made. Continue with: qualspec run "
                f"{ns.suite} --resume {outcome.run_id} --max-cost <more>[/yellow]"
            )
    finally:
        store.close()
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


@contextmanager
def _progress(plan: Plan, ns: argparse.Namespace, *, judge: bool) -> Iterator[ProgressFn | None]:
    if ns.quiet:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    ) as bar:
        tasks = {"candidate": bar.add_task("answers", total=len(plan.items))}
        if judge and plan.judge_calls:
            tasks["judge"] = bar.add_task("judgments", total=plan.judge_calls)

        def advance(kind: str, n: int) -> None:
            if n and kind in tasks:
                bar.advance(tasks[kind], n)

        yield advance


def _print_dry_run(plan: Plan, est: Estimate, console: Console) -> None:
    roles = ", ".join(plan.roles) if plan.roles else "(none)"
    temps = ", ".join(f"{t:g}" for t in plan.temperatures)
    console.print("[bold]Dry run[/bold]: nothing will be called.")
    console.print(f"  candidates   {len(plan.candidates)}: {', '.join(plan.candidates)}")
    console.print(f"  roles        {len(plan.roles)}: {roles}")
    console.print(f"  scenarios    {len(plan.scenarios)}: {', '.join(plan.scenarios)}")
    console.print(f"  inputs       {plan.n_inputs} (rows over all scenarios)")
    console.print(f"  temperatures {len(plan.temperatures)}: {temps}")
    console.print(f"  runs         {plan.runs} per temperature")
    console.print(f"  judge        {plan.judge_model} (pass at {plan.threshold:g}/10)")
    console.print(f"[bold]Candidate calls:[/bold] {est.candidate_calls}")
    console.print(f"[bold]Judge calls:[/bold] {est.judge_calls} (before parse retries)")
    console.print(f"[bold]Estimated tokens:[/bold] {est.input_tokens} in / {est.output_tokens} out")
    for row in est.rows:
        cost = "price unknown" if row.cost_usd is None else f"${row.cost_usd:.4f}"
        console.print(
            f"  {row.kind:<9} {row.model:<24} {row.calls:>5} calls "
            f"{row.input_tokens:>8} in {row.output_tokens:>8} out  {cost}"
        )
    total = est.cost_usd
    console.print(
        "[bold]Estimated cost:[/bold] "
        + (
            "unknown (some model has no price: add it with --prices)"
            if total is None
            else f"${total:.4f}"
        )
    )
