"""``qualspec run``: load, plan, dry-run or execute, record, write results JSON, report.

Exit codes: 0 the run completed (failing scores are results); 1 no cell could be answered
(every candidate call failed), or with ``--fail-on-errors`` some call failed; the results
file is written in every case before the report is printed. Names, paths, ids and model
text are printed literally (never read as rich markup).
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qualspec.cli._args import (
    Commands,
    add_db,
    add_output,
    cache_ttl,
    non_negative_int,
    positive_float,
    positive_int,
    score,
)
from qualspec.cli._collector import collecting, import_for_run, paused_collector
from qualspec.cli._console import plural, say
from qualspec.cli._large_run import add_summarise_above, budget_stop, large_run_report
from qualspec.cli._prefetch import prefetch_http
from qualspec.cli._progress import LazyProgress
from qualspec.cli._store_close import BackgroundClose, view_keeper
from qualspec.messages import one_line

if TYPE_CHECKING:
    from rich.console import Console

    from qualspec.analysis import RunAnalysis
    from qualspec.engine import ExecuteOptions, Plan, RunOutcome
    from qualspec.providers import PriceTable
    from qualspec.report import PromptRefs
    from qualspec.spec import LoadedSuite
    from qualspec.store import RunRecord, Store

__all__ = ["add_parser", "cmd_run"]


def add_parser(commands: Commands) -> None:
    """``qualspec run SUITE`` and its flags."""
    run = commands.add_parser("run", help="run (or --dry-run) a suite file (.yaml or .py)")
    run.add_argument("suite", help="suite file: YAML, or Python defining an Evaluation")
    run.add_argument(
        "--dry-run", action="store_true", help="print the matrix and costs; call nothing"
    )
    run.add_argument("--candidates", metavar="A,B", help="only these candidates")
    run.add_argument("--roles", metavar="A,B", help="only these roles")
    run.add_argument("--scenarios", metavar="A,B", help="only these scenarios")
    run.add_argument(
        "--temps",
        "--temperatures",
        dest="temps",
        metavar="T,T|PRESET",
        help="temperatures, e.g. 0,0.7 or a preset: stability_test, full_range, safety_probe",
    )
    run.add_argument(
        "--runs",
        "--runs-per-temp",
        dest="runs",
        type=positive_int,
        metavar="N",
        help="repeated runs per temperature",
    )
    run.add_argument("--model", metavar="PROVIDER/MODEL", help="run every candidate on this model")
    run.add_argument("--judge", metavar="PROVIDER/MODEL", help="judge model (default: suite's)")
    run.add_argument("--threshold", type=score, metavar="SCORE", help="pass threshold 0-10")
    run.add_argument("--no-judge", action="store_true", help="collect answers only")
    run.add_argument(
        "--no-calibration",
        action="store_true",
        help="do not measure the judge's separation on known good/bad pairs before the run",
    )
    _add_call_flags(run)
    _add_ray_flags(run)
    _add_cache_flags(run)
    _add_outcome_flags(run)
    run.set_defaults(handler=cmd_run)


def _add_call_flags(run: argparse.ArgumentParser) -> None:
    """How calls are made, where the results go, and ``--resume``."""
    run.add_argument(
        "--max-concurrency",
        type=positive_int,
        metavar="N",
        help="concurrent calls per provider (default: the provider's)",
    )
    run.add_argument(
        "--timeout",
        type=positive_float,
        default=120.0,
        metavar="SECONDS",
        help="per-attempt timeout (default 120)",
    )
    run.add_argument(
        "--retries",
        type=non_negative_int,
        default=3,
        metavar="N",
        help="retries after a failed attempt (default 3)",
    )
    add_summarise_above(run)
    add_output(run, "--output", hint="the results file is always JSON", help="results JSON path")
    run.add_argument(
        "--html",
        metavar="PATH",
        help="also write the self-contained HTML report of the run to PATH",
    )
    run.add_argument(
        "--results-dir",
        default="results",
        metavar="DIR",
        help="directory for results/<suite>_<timestamp>.json (default results)",
    )
    run.add_argument(
        "--resume",
        nargs="?",
        const=True,
        default=None,
        metavar="RUN_ID",
        help="continue the latest unfinished run of this suite (or RUN_ID): only missing work",
    )


def _add_ray_flags(run: argparse.ArgumentParser) -> None:
    """``--executor ray`` and its settings (the ``ray`` extra)."""
    run.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where model calls run: local (this process, the default) or ray (embedded "
        "models as Ray actors over a cluster; pip install 'qualspec[ray]')",
    )
    run.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="with --executor ray: the cluster (auto, HOST:6379, ray://HOST:10001); default "
        "$RAY_ADDRESS, else a Ray instance started on this machine",
    )
    run.add_argument(
        "--ray-actors",
        type=positive_int,
        metavar="N",
        help="with --executor ray: actors (model copies) per provider (default one per node)",
    )
    run.add_argument(
        "--ray-num-cpus",
        type=positive_float,
        metavar="N",
        help="with --executor ray: CPUs each actor reserves and runs on (default 1)",
    )


def _add_cache_flags(run: argparse.ArgumentParser) -> None:
    run.add_argument("--no-cache", action="store_true", help="neither read nor use the cache")
    run.add_argument("--refresh", action="store_true", help="call again and overwrite the cache")
    run.add_argument(
        "--refresh-reference",
        action="store_true",
        help="ask the reference models again and overwrite their cached answers",
    )
    run.add_argument(
        "--cache-ttl",
        action="append",
        default=[],
        type=cache_ttl,
        metavar="KIND=SECONDS",
        help="cache lifetime per kind (candidate, judge, reference; 'none' = forever), "
        "repeatable; judged by each entry's age when it is read, so it applies to entries "
        "already cached; default: candidate and judge answers never expire, reference "
        "answers after 86400 s (24 h)",
    )


def _add_outcome_flags(run: argparse.ArgumentParser) -> None:
    """Budget, prices, what is printed, the exit code, the database."""
    run.add_argument("--max-cost", type=positive_float, metavar="USD", help="stop at this cost")
    run.add_argument("--prices", metavar="PATH", help="JSON price table overriding the built-in")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    run.add_argument("--show-responses", action="store_true", help="print each response text")
    run.add_argument(
        "--fail-on-errors",
        action="store_true",
        help="exit 1 when any call failed (default: only when no cell could be answered)",
    )
    run.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when a judge could not score anything (unreachable, or never parsed)",
    )
    run.add_argument(
        "--store-retry",
        type=positive_float,
        default=30.0,
        metavar="SECONDS",
        help="how long a failing database is retried before the run stops, failed and "
        "resumable (default 30)",
    )
    add_db(run)


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


def cmd_run(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Entry of ``qualspec run``: the start-up (imports, suite, plan, store) without garbage
    collection, which starts with the run (see :mod:`qualspec.cli._collector`)."""
    with paused_collector():
        return _run_command(ns, argv)


def _run_command(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    prefetch_http(ns)  # the HTTP client's import beside the suite's loading
    from rich.console import Console

    from qualspec.providers import PriceTable

    suite, plan = build_plan(ns)
    from qualspec.engine import check_plan

    check_plan(suite, plan, judge=not ns.no_judge)  # unknown providers, missing packages
    console = Console(highlight=False)
    for warning in plan.warnings:  # at plan time, before any call (and in a dry run)
        say(console, ("warning:", "yellow"), f" {warning}")
    gc.freeze()  # the suite, the plan and what they imported: see _execute
    cache_ttl = _cache_ttl(ns.cache_ttl)
    prices = PriceTable.load(Path(ns.prices) if ns.prices else None)
    if ns.dry_run:
        from qualspec.cli._dry_run import dry_run  # loaded for a dry run only

        collecting()  # the start-up is over: a dry run of a large plan collects as usual
        dry_run(ns, plan, prices, console)
        return 0
    outcome, store, refs, analysis = _execute(ns, suite, plan, _options(ns, cache_ttl), argv)
    if outcome.summarised or analysis is None:  # a large run: streamed from the store
        return large_run_report(ns, outcome, store, console)
    db_display = store.url_for_display
    with BackgroundClose(
        store, view_keeper(store, outcome.record)
    ):  # the store closes while the results are written
        for warning in outcome.warnings:
            if warning in plan.warnings:  # said before the run
                continue
            say(console, ("warning:", "yellow"), f" {warning}")
        # the results file first: whatever happens to the report, the results are kept
        path = _write_and_render(ns, outcome, refs, prices, console, analysis)
    _print_footer(ns, outcome, path, db_display, console)
    code = _exit_code(outcome.record, fail_on_errors=getattr(ns, "fail_on_errors", False))
    if code == 0 and getattr(ns, "strict", False) and outcome.judge_failures:
        print(f"qualspec: --strict: {outcome.judge_failures[0]}", file=sys.stderr)
        code = 1
    return code


def _options(ns: argparse.Namespace, cache_ttl: dict[str, float | None]) -> ExecuteOptions:
    """The run's execution options, from the command line."""
    from qualspec.engine import ExecuteOptions, RetryPolicy

    return ExecuteOptions(
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
        summarise_above=ns.summarise_above,
        **_ray_options(ns),
    )


def _ray_options(ns: argparse.Namespace) -> dict[str, Any]:
    """``ExecuteOptions``' Ray settings from the command line (refused without ``--executor
    ray``: they would do nothing)."""
    from qualspec.errors import ConfigError

    executor = getattr(ns, "executor", "local")
    given = {
        "--ray-address": getattr(ns, "ray_address", None),
        "--ray-actors": getattr(ns, "ray_actors", None),
        "--ray-num-cpus": getattr(ns, "ray_num_cpus", None),
    }
    if executor != "ray":
        for flag, value in given.items():
            if value is not None:
                raise ConfigError(f"{flag} is for the Ray executor: add --executor ray")
    return {
        "executor": executor,
        "ray_address": given["--ray-address"],
        "ray_actors": given["--ray-actors"],
        "ray_num_cpus": given["--ray-num-cpus"],
    }


def _execute(
    ns: argparse.Namespace,
    suite: LoadedSuite,
    plan: Plan,
    options: ExecuteOptions,
    argv: Sequence[str],
) -> tuple[RunOutcome, Store, PromptRefs, RunAnalysis | None]:
    """Run the plan, recorded; the outcome, the store (still open: the caller closes it,
    see :class:`~qualspec.cli._store_close.BackgroundClose`), the prompts used and the run's
    analysis (kept in the store, so the web app's first view reads it)."""
    import asyncio

    # used after the run: imported before the freeze below (packages load on first use)
    from qualspec.analysis import analyze_run, run_totals, stored_analysis  # noqa: F401
    from qualspec.engine import Session, run_sync
    from qualspec.report import (  # noqa: F401
        cache_phrase,
        default_results_path,
        prompt_refs,
        render_run,
        run_to_dict,
        write_json_atomic,
    )

    # with the embeddings extra, answers are embedded as they come (while calls wait); a
    # plan that repeats no cell has nothing to compare: the embedding modules stay unloaded
    sink = None
    if len(plan.temperatures) * plan.runs > 1:
        from qualspec.analysis import live_embedding_sink

        sink = live_embedding_sink(True)

    async def main() -> tuple[RunOutcome, Store, PromptRefs, RunAnalysis | None]:
        # opened here, not by the session (which then leaves it open): closing a SQLite
        # store checkpoints its log to disk (tens of ms of I/O), done while the results
        # are written
        store = await asyncio.to_thread(Store.open, ns.db)
        try:
            async with Session(db=store, options=options, prices=ns.prices, sink=sink) as session:
                with LazyProgress(
                    plan, judge=not ns.no_judge, quiet=ns.quiet, cost=lambda: session.spent_usd
                ) as progress:
                    outcome = await session.run_plan(
                        suite, plan, resume=ns.resume, progress=progress, argv=list(argv)
                    )
                if outcome.summarised:  # not loaded whole: see large_run_report
                    return outcome, store, {}, None
                refs = await asyncio.to_thread(prompt_refs, store, outcome.record)
                analysis = await asyncio.to_thread(stored_analysis, store, outcome.record)
        except BaseException:
            store.close()
            raise
        return outcome, store, refs, analysis

    # What is imported and built so far (the store's SQLAlchemy too, imported here) lives
    # until the process ends: frozen, the collector never walks it (unfrozen, it walked
    # these objects twice per run: 20-30 ms of CPU). Objects made later are collected.
    from qualspec.store import Store

    import_for_run(suite.evaluation, plan.judge_model)
    collecting()
    return run_sync(main)


def _write_and_render(
    ns: argparse.Namespace,
    outcome: RunOutcome,
    refs: PromptRefs,
    prices: PriceTable,
    console: Console,
    analysis: RunAnalysis,
) -> Path:
    """Write the results file (then the HTML report) and print the report; the file's path."""
    from datetime import UTC, datetime

    from qualspec.analysis import run_verdicts
    from qualspec.report import default_results_path, render_run, run_to_dict, write_json_atomic

    run = outcome.record.summary
    default = default_results_path(run.suite_name, datetime.now(UTC), ns.results_dir, run_id=run.id)
    path = Path(ns.output) if ns.output else default
    verdicts = run_verdicts(outcome.record)  # computed once: the file's and the report's
    write_json_atomic(path, run_to_dict(outcome.record, refs, analysis=analysis, verdicts=verdicts))
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
        verdicts=verdicts,
    )
    return path


def _print_footer(
    ns: argparse.Namespace, outcome: RunOutcome, path: Path, db_display: str, console: Console
) -> None:
    """The calls made, where the results are, and how to go on after a budget stop."""
    from qualspec.analysis import run_totals
    from qualspec.report import cache_phrase

    stats = outcome.stats
    # calls made here; what came from the cache is counted from the stored records, as the
    # results file (cached_responses, cached_judgments) and the HTML report count it
    say(
        console,
        ("Calls:", "bold"),
        f" {stats.candidate_calls} candidate, {stats.judge_calls} judge"
        + (f", {stats.reference_calls} reference" if stats.reference_calls else "")
        + f" made; {cache_phrase(run_totals(outcome.record))}"
        + (f" (saved ${stats.saved_usd:.4f})" if stats.saved_usd else ""),
    )
    say(console, f"Results: {path}   (run id {outcome.run_id}, database {db_display})")
    if ns.html:
        say(console, f"HTML report: {ns.html}")
    if outcome.status == "budget_exceeded":
        say(console, budget_stop(ns, outcome.run_id, stats.skipped_for_budget))


def _exit_code(record: RunRecord, *, fail_on_errors: bool) -> int:
    """1 when no cell could be answered, or (``--fail-on-errors``) when a call failed."""

    responses = [r for r in record.responses if r.kind == "candidate"]
    failed = [r for r in responses if r.error is not None]
    if responses and len(failed) == len(responses):
        print(
            f"qualspec: run failed: no cell could be answered ({plural(len(failed), 'call')} "
            f"failed; first error: {one_line(failed[0].error or '', 300)})",
            file=sys.stderr,
        )
        return 1
    judge_errors = [j for j in record.judgments if j.error is not None]
    if fail_on_errors and (failed or judge_errors):
        what = []
        if failed:
            what.append(f"{plural(len(failed), 'candidate call')} failed")
        if judge_errors:
            what.append(f"{plural(len(judge_errors), 'judgment')} failed")
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
