"""Argument parser and dispatch with one-line errors (tracebacks only with --debug)."""

from __future__ import annotations

import argparse
import math
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from qualspec.errors import (
    AuthenticationError,
    ConfigError,
    QualspecError,
    SpecError,
)

__all__ = ["build_parser", "dispatch"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

Handler = Callable[[argparse.Namespace, Sequence[str]], int]


def _positive_int(text: str) -> int:
    return _whole(text, 1)


def _whole(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {minimum} or more, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    return _whole(text, 0)


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {value:g}")
    return value


def _non_negative_float(text: str) -> float:
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value:g}")
    return value


def _score(text: str) -> float:
    value = _number(text)
    if not 0 <= value <= 10:
        raise argparse.ArgumentTypeError(f"expected a score from 0 to 10, got {value:g}")
    return value


_TTL_KINDS = ("candidate", "judge", "reference")


def _cache_ttl(text: str) -> str:
    kind, sep, seconds = text.partition("=")
    if not sep or kind not in _TTL_KINDS:
        raise argparse.ArgumentTypeError(
            f"write KIND=SECONDS with KIND one of {', '.join(_TTL_KINDS)}, e.g. candidate=3600; "
            f"got {text!r}"
        )
    if seconds.strip().lower() not in ("none", "forever"):
        _non_negative_float(seconds)
    return text


def _add_cache_ttl(parser: argparse.ArgumentParser, what: str) -> None:
    """``--cache-ttl KIND=SECONDS`` of ``cache stats`` and ``cache clear``: expiry judged
    as ``qualspec run --cache-ttl`` reads the cache."""
    parser.add_argument(
        "--cache-ttl",
        action="append",
        default=[],
        type=_cache_ttl,
        metavar="KIND=SECONDS",
        help=f"{what} (as `qualspec run --cache-ttl`: candidate, judge, reference; 'none' = "
        "forever; repeatable); default: the run's defaults, candidate and judge answers "
        "never expire, reference answers after 86400 s (24 h), by their age now",
    )


# What a user may type after -o expecting a format: -o always takes a file path.
_FORMAT_NAMES = frozenset({"json", "jsonl", "csv", "text", "txt", "markdown", "md", "html", "yaml"})


def _add_output(parser: argparse.ArgumentParser, *flags: str, hint: str, help: str) -> None:
    """An ``-o PATH`` flag: a file path, never a format name.

    ``-o json`` used to write a file named ``json``; :func:`dispatch` refuses it in one
    line with ``hint`` (how the command chooses its format). A file of that name is still
    ``-o ./json``.
    """
    dest = flags[0].lstrip("-").replace("-", "_")
    parser.add_argument(*flags, "-o", dest=dest, metavar="PATH", help=help)
    parser.set_defaults(output_flag=(dest, hint))


def _format_as_path(ns: argparse.Namespace) -> str | None:
    """The one-line refusal of ``-o json`` (a format given where a path is), or None."""
    flag = getattr(ns, "output_flag", None)
    if flag is None:
        return None
    dest, hint = flag
    text = getattr(ns, dest, None)
    if not isinstance(text, str) or text.strip().lower() not in _FORMAT_NAMES:
        return None
    return (
        f"qualspec: error: -o {text}: a format, not a file: -o takes a path; {hint} "
        f"(a file named {text}: -o ./{text})"
    )


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="URL",
        help="database URL (default: $QUALSPEC_DATABASE_URL, else sqlite under "
        "$QUALSPEC_HOME or ./.qualspec)",
    )


def _add_globals(parser: argparse.ArgumentParser, default: object) -> None:
    """``--debug`` and ``--verbose``: on the top level (defaults) and on every command.

    A command's copies default to SUPPRESS, so they only set what was given after the
    command, and the flags work before or after it.
    """
    parser.add_argument(
        "--debug",
        action="store_true",
        default=False if default is not argparse.SUPPRESS else argparse.SUPPRESS,
        help="show tracebacks on errors",
    )
    parser.add_argument(
        "--verbose",
        "-v",
        action="count",
        default=default,
        help="log retries, budget stops, cache hits and slow commits to stderr (-vv: debug); "
        "run and runs show: list each comparison group's winner and reason",
    )


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree."""
    parser = argparse.ArgumentParser(
        prog="qualspec",
        description="LLM-judged qualitative evaluation: candidates x roles x scenarios x "
        "temperatures x runs, judged per criterion, recorded, compared.",
    )
    _add_globals(parser, 0)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run (or --dry-run) a suite file (.yaml or .py)")
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
        type=_positive_int,
        metavar="N",
        help="repeated runs per temperature",
    )
    run.add_argument("--model", metavar="PROVIDER/MODEL", help="run every candidate on this model")
    run.add_argument("--judge", metavar="PROVIDER/MODEL", help="judge model (default: suite's)")
    run.add_argument("--threshold", type=_score, metavar="SCORE", help="pass threshold 0-10")
    run.add_argument("--no-judge", action="store_true", help="collect answers only")
    run.add_argument(
        "--no-calibration",
        action="store_true",
        help="do not measure the judge's separation on known good/bad pairs before the run",
    )
    run.add_argument(
        "--max-concurrency",
        type=_positive_int,
        metavar="N",
        help="concurrent calls per provider (default: the provider's)",
    )
    run.add_argument(
        "--timeout",
        type=_positive_float,
        default=120.0,
        metavar="SECONDS",
        help="per-attempt timeout (default 120)",
    )
    run.add_argument(
        "--retries",
        type=_non_negative_int,
        default=3,
        metavar="N",
        help="retries after a failed attempt (default 3)",
    )
    _add_output(run, "--output", hint="the results file is always JSON", help="results JSON path")
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
        type=_cache_ttl,
        metavar="KIND=SECONDS",
        help="cache lifetime per kind (candidate, judge, reference; 'none' = forever), "
        "repeatable; judged by each entry's age when it is read, so it applies to entries "
        "already cached; default: candidate and judge answers never expire, reference "
        "answers after 86400 s (24 h)",
    )
    run.add_argument("--max-cost", type=_positive_float, metavar="USD", help="stop at this cost")
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
        type=_positive_float,
        default=30.0,
        metavar="SECONDS",
        help="how long a failing database is retried before the run stops, failed and "
        "resumable (default 30)",
    )
    _add_db(run)
    run.set_defaults(handler="qualspec.cli._run:cmd_run")

    schema = sub.add_parser("schema", help="print the JSON Schema of the YAML suite format")
    schema.set_defaults(handler="qualspec.cli._misc:cmd_schema")

    runs = sub.add_parser("runs", help="history: list, show and export recorded runs")
    runs_sub = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    rl = runs_sub.add_parser("list", help="recent runs")
    rl.add_argument("--suite", help="only runs of this suite name")
    rl.add_argument("--limit", type=_positive_int, default=20)
    _add_db(rl)
    rl.set_defaults(handler="qualspec.cli._history:cmd_runs_list")
    rs = runs_sub.add_parser("show", help="the report of one run")
    rs.add_argument("run_id", metavar="RUN")
    rs.add_argument("--show-responses", action="store_true")
    _add_db(rs)
    rs.set_defaults(handler="qualspec.cli._history:cmd_runs_show")
    re_ = runs_sub.add_parser("export", help="write a run as json, jsonl or csv")
    re_.add_argument("run_id", metavar="RUN")
    re_.add_argument("--format", choices=["json", "jsonl", "csv"], default="json")
    _add_output(
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
    _add_db(re_)
    re_.set_defaults(handler="qualspec.cli._history:cmd_runs_export")

    diff = sub.add_parser("diff", help="compare two runs (run ids or results JSON files)")
    diff.add_argument("a", metavar="A")
    diff.add_argument("b", metavar="B")
    diff.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    diff.add_argument(
        "--noise",
        type=_non_negative_float,
        default=0.5,
        metavar="POINTS",
        help="score changes within this many points are unchanged (default 0.5)",
    )
    diff.add_argument(
        "--fail-on-regression", action="store_true", help="exit 1 when something regressed"
    )
    _add_db(diff)
    diff.set_defaults(handler="qualspec.cli._history:cmd_diff")

    compare = sub.add_parser(
        "compare",
        help="compare two runs with statistical confidence (run ids, prefixes or results "
        "JSON files)",
    )
    compare.add_argument("a", metavar="RUN_A", help="the baseline run (e.g. agent prompt v1)")
    compare.add_argument("b", metavar="RUN_B", help="the run to compare with it (e.g. v2)")
    compare.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    compare.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when B is significantly worse than A overall",
    )
    _add_db(compare)
    compare.set_defaults(handler="qualspec.cli._quality:cmd_compare")

    insights = sub.add_parser(
        "insights", help="what to fix next in a run, each recommendation with its evidence"
    )
    insights.add_argument(
        "run_id", metavar="RUN", help="run id, unique id prefix, or results .json"
    )
    insights.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    _add_db(insights)
    insights.set_defaults(handler="qualspec.cli._quality:cmd_insights")

    gc_ = sub.add_parser(
        "grader-check",
        help="re-grade a run's graded answers N times: is the grader consistent?",
    )
    gc_.add_argument("run_id", metavar="RUN", help="run id or unique id prefix")
    gc_.add_argument(
        "--repeats", type=_positive_int, default=3, metavar="N", help="re-grade N times (default 3)"
    )
    gc_.add_argument(
        "--max-spread",
        type=_non_negative_float,
        default=None,
        metavar="POINTS",
        help="flag items whose scores spread more than this (default 5 on the 0-100 field "
        "scale, 0.5 on the 0-10 criteria scale)",
    )
    gc_.add_argument("--max-cost", type=_positive_float, metavar="USD", help="stop at this cost")
    gc_.add_argument("--format", choices=["text", "json"], default="text")
    _add_db(gc_)
    gc_.set_defaults(handler="qualspec.cli._grader_check:cmd_grader_check")

    report = sub.add_parser(
        "report", help="write the HTML report of a run (run id, prefix or results JSON)"
    )
    report.add_argument("run_id", metavar="RUN", help="run id, unique id prefix, or results .json")
    report.add_argument(
        "--html",
        required=True,
        metavar="PATH",
        help="write the self-contained HTML report (offline, no script) to PATH",
    )
    _add_db(report)
    report.set_defaults(handler="qualspec.cli._history:cmd_report")

    prompts = sub.add_parser("prompts", help="versioned prompts: list, show, diff")
    p_sub = prompts.add_subparsers(dest="prompts_command", metavar="ACTION", required=True)
    pl = p_sub.add_parser("list", help="every prompt name with its versions")
    _add_db(pl)
    pl.set_defaults(handler="qualspec.cli._misc:cmd_prompts_list")
    ps = p_sub.add_parser("show", help="one prompt version's text")
    ps.add_argument("name")
    ps.add_argument("version", type=_positive_int, nargs="?")
    _add_db(ps)
    ps.set_defaults(handler="qualspec.cli._misc:cmd_prompts_show")
    pd = p_sub.add_parser("diff", help="unified diff of two versions of a prompt")
    pd.add_argument("name")
    pd.add_argument("version_a", type=_positive_int)
    pd.add_argument("version_b", type=_positive_int)
    _add_db(pd)
    pd.set_defaults(handler="qualspec.cli._misc:cmd_prompts_diff")

    cache = sub.add_parser("cache", help="the response cache: stats, clear")
    c_sub = cache.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    cs = c_sub.add_parser("stats", help="entries and size per kind")
    cs.add_argument("--json", action="store_true", help="print the numbers as JSON")
    _add_cache_ttl(cs, "count as expired what a run with these lifetimes would not read")
    _add_db(cs)
    cs.set_defaults(handler="qualspec.cli._misc:cmd_cache_stats")
    cc = c_sub.add_parser("clear", help="delete cache entries")
    cc.add_argument("--kind", help="only this kind (candidate, judge, reference)")
    cc.add_argument(
        "--expired",
        action="store_true",
        help="only entries a run would not read now (see --cache-ttl)",
    )
    _add_cache_ttl(cc, "with --expired: remove what a run with these lifetimes would not read")
    _add_db(cc)
    cc.set_defaults(handler="qualspec.cli._misc:cmd_cache_clear")
    reference = sub.add_parser(
        "reference", help="reference answers: list, show, validate, dispute, override"
    )
    ref_sub = reference.add_subparsers(dest="reference_command", metavar="ACTION", required=True)
    rfl = ref_sub.add_parser("list", help="the reference answers with their review status")
    rfl.add_argument(
        "--status",
        metavar="S",
        help="only this status: unvalidated, validated, needs_review, disputed",
    )
    rfl.add_argument("--run", metavar="RUN", help="only the references this run used")
    rfl.set_defaults(handler="qualspec.cli._reference:cmd_reference_list")
    rfs = ref_sub.add_parser("show", help="a reference answer, its status, notes and audit trail")
    rfs.set_defaults(handler="qualspec.cli._reference:cmd_reference_show")
    ref_commands = [rfl, rfs]
    for action, what in (
        ("validate", "mark a reference answer validated (checked by a person)"),
        ("dispute", "mark a reference answer disputed (a person thinks it is wrong)"),
        ("needs-review", "mark a reference answer as needing review"),
    ):
        status_cmd = ref_sub.add_parser(action, help=what)
        status_cmd.add_argument("--notes", metavar="TEXT", help="why (kept with the review)")
        status_cmd.set_defaults(handler="qualspec.cli._reference:cmd_reference_status")
        ref_commands.append(status_cmd)
    rfo = ref_sub.add_parser(
        "override", help="replace a reference answer by a corrected JSON file (audited)"
    )
    rfo.add_argument(
        "--file", required=True, metavar="PATH", help="the corrected answer, a JSON file"
    )
    rfo.add_argument("--notes", metavar="TEXT", help="why (kept with the review)")
    rfo.set_defaults(handler="qualspec.cli._reference:cmd_reference_override")
    ref_commands.append(rfo)
    for command in ref_commands[1:]:
        command.add_argument("id", metavar="ID", help="call key or unique prefix (reference list)")
    for command in ref_commands:
        _add_db(command)
    jc = sub.add_parser(
        "judge-check",
        help="calibrate a judge on known good and bad answers, or a field grader on known "
        "field values (--grader): separation",
    )
    who = jc.add_mutually_exclusive_group()
    who.add_argument(
        "--judge", default=None, metavar="PROVIDER/MODEL", help="the judge (default local/smollm2)"
    )
    who.add_argument(
        "--grader",
        default=None,
        metavar="PROVIDER/MODEL",
        help="calibrate this reference field grader instead: equal-meaning values against "
        "clearly wrong ones",
    )
    jc.add_argument(
        "--repeats", type=_positive_int, default=1, metavar="N", help="score each answer N times"
    )
    jc.add_argument(
        "--pairs", type=_positive_int, default=None, metavar="N", help="the first N pairs only"
    )
    jc.add_argument(
        "--mode",
        choices=("per_criterion", "all_criteria"),
        default="per_criterion",
        help="the judge's mode (as judge.mode in a suite)",
    )
    jc.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_db(jc)
    jc.set_defaults(handler="qualspec.cli._judge_check:cmd_judge_check")
    test = sub.add_parser("test", help="prompt-response tests (qualspec.testkit): list, run")
    t_sub = test.add_subparsers(dest="test_command", metavar="ACTION", required=True)
    tl = t_sub.add_parser("list", help="the registered tests (entry point group qualspec.tests)")
    tl.set_defaults(handler="qualspec.cli._test:cmd_test_list")
    tr = t_sub.add_parser("run", help="run a test on one or more systems under test")
    tr.add_argument("test_name", metavar="NAME", help="a registered test, or module:TestClass")
    tr.add_argument(
        "--sut",
        action="append",
        required=True,
        metavar="PROVIDER/MODEL",
        help="a system under test (repeat for several)",
    )
    tr.add_argument("--limit", type=_positive_int, metavar="N", help="the first N items only")
    tr.add_argument(
        "--resume",
        nargs="?",
        const=True,
        default=None,
        metavar="RUN",
        help="finish the latest unfinished run of this test (or run RUN)",
    )
    tr.add_argument("--no-cache", action="store_true", help="neither read nor use the cache")
    tr.add_argument("--refresh", action="store_true", help="call again and overwrite the cache")
    tr.add_argument("--max-cost", type=_positive_float, metavar="USD", help="stop at this cost")
    tr.add_argument("--json", action="store_true", help="print the results as JSON")
    tr.add_argument(
        "--dry-run",
        action="store_true",
        help="list every prompt the test would send to each SUT; call nothing",
    )
    _add_db(tr)
    tr.set_defaults(handler="qualspec.cli._test:cmd_test_run")
    lab, serve = _add_lab(sub), _add_serve(sub)
    trend = _add_trend(sub)
    rubric_commands = _add_rubrics(sub)
    # every command takes the global flags too: `qualspec run x.yaml --debug` works
    for command in (
        run,
        schema,
        rl,
        rs,
        re_,
        diff,
        compare,
        insights,
        gc_,
        report,
        pl,
        ps,
        pd,
        cs,
        cc,
        jc,
        lab,
        serve,
        trend,
        *rubric_commands,
        *ref_commands,
        tl,
        tr,
    ):
        _add_globals(command, argparse.SUPPRESS)
    return parser


def _unit(text: str) -> float:
    value = _number(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a score from 0 to 1, got {value:g}")
    return value


def _iterations(text: str) -> int:
    value = _whole(text, 1)
    if value > 10:
        raise argparse.ArgumentTypeError(f"expected 1 to 10 iterations, got {value}")
    return value


def _add_lab(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    lab = sub.add_parser(
        "lab", help="refine an answer: generate, evaluate (0-1), feed back, keep the best"
    )
    lab.add_argument("instruct", metavar="INSTRUCTION", help="the question or task")
    lab.add_argument("--format", required=True, help="the form the answer must take")
    lab.add_argument("--criteria", required=True, help="what the evaluator checks")
    lab.add_argument(
        "--iter-max", type=_iterations, default=3, metavar="N", help="at most N rounds (1-10)"
    )
    lab.add_argument(
        "--threshold", type=_unit, default=0.8, help="score (0-1) that accepts an answer"
    )
    lab.add_argument("--model", metavar="PROVIDER/MODEL", help="writer (default local/smollm2)")
    lab.add_argument("--judge", metavar="PROVIDER/MODEL", help="evaluator (default: --model)")
    lab.add_argument(
        "--max-tokens", type=_positive_int, metavar="N", help="the writer's answer length limit"
    )
    lab.add_argument("--json", action="store_true", help="print the whole result as JSON")
    _add_db(lab)
    lab.set_defaults(handler="qualspec.cli._lab:cmd_lab")
    return lab


def _add_trend(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    trend = sub.add_parser(
        "trend",
        help="accuracy across several runs (oldest first), per model, with n and 95%% CI",
    )
    trend.add_argument(
        "runs", nargs="*", metavar="RUN", help="run ids, prefixes or results JSON, oldest first"
    )
    trend.add_argument("--suite", metavar="NAME", help="the last finished runs of this suite")
    trend.add_argument(
        "--last", type=_positive_int, default=5, metavar="N", help="with --suite (default 5)"
    )
    trend.add_argument("--format", choices=["text", "json"], default="text")
    trend.add_argument("--output", "-o", metavar="PATH", help="also write the trend as JSON")
    trend.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a run is significantly worse than the one before it",
    )
    _add_db(trend)
    trend.set_defaults(handler="qualspec.cli._trend:cmd_trend")
    return trend


def _add_serve(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    serve = sub.add_parser("serve", help="the web app: runs, run detail, diff, the Lab")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=_non_negative_int, default=8000, help="default 8000")
    serve.add_argument(
        "--token",
        help="require this token on every route (default $QUALSPEC_WEB_TOKEN); needed to "
        "bind anything but 127.0.0.1",
    )
    _add_db(serve)
    serve.set_defaults(handler="qualspec.cli._lab:cmd_serve")
    return serve


def _add_mining(parser: argparse.ArgumentParser) -> None:
    """The model flags of the rubric commands that call a model."""
    parser.add_argument(
        "--model",
        metavar="PROVIDER/MODEL",
        help="the model that reads the sessions (default local/smollm2)",
    )
    parser.add_argument(
        "--retries",
        type=_non_negative_int,
        default=2,
        metavar="N",
        help="ask again up to N times when an answer cannot be read (default 2)",
    )
    parser.add_argument(
        "--max-session-chars",
        type=_positive_int,
        metavar="N",
        help="cut longer sessions, with a visible marker (default: what fits the model)",
    )
    parser.add_argument(
        "--max-tokens", type=_positive_int, metavar="N", help="the answer's token limit"
    )
    parser.add_argument("--max-cost", type=_positive_float, metavar="USD", help="stop at this cost")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    _add_db(parser)


def _add_rubrics(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> list[Any]:
    """``qualspec rubrics extract|summarize|judge|format``."""
    rubrics = sub.add_parser(
        "rubrics", help="mine rubrics from coding-assistant sessions and judge sessions by them"
    )
    r_sub = rubrics.add_subparsers(dest="rubrics_command", metavar="ACTION", required=True)
    ex = r_sub.add_parser("extract", help="extract rubrics from each (selected) session")
    ex.add_argument("sessions", metavar="DIR", help="a session file or a folder of them")
    ex.add_argument(
        "--score-name",
        default="default",
        metavar="NAME",
        help="what made the sessions good: default, excellence, token_efficiency, "
        "user_turn_efficiency (chooses the extractor prompt)",
    )
    ex.add_argument(
        "--min",
        type=_positive_int,
        default=3,
        metavar="N",
        help="rubrics per session, at least (default 3)",
    )
    ex.add_argument(
        "--max",
        type=_positive_int,
        default=7,
        metavar="N",
        help="rubrics per session, at most (default 7)",
    )
    ex.add_argument(
        "--min-score",
        type=_number,
        metavar="X",
        help="only sessions scoring X or more (their label, else the --score-name metric)",
    )
    ex.add_argument(
        "--labels",
        metavar="PATH",
        help='scores per session: JSON {"<session id>": score} or CSV session_id,score',
    )
    _add_output(
        ex,
        "--out",
        "--output",
        hint="the output is JSON, on standard output without -o",
        help="write the JSON here (default stdout)",
    )
    _add_mining(ex)
    ex.set_defaults(handler="qualspec.cli._rubrics:cmd_rubrics_extract")
    su = r_sub.add_parser("summarize", help="consolidate extracted rubrics into 5-10 final ones")
    su.add_argument("extracted", metavar="EXTRACTED", help="the JSON of `rubrics extract`")
    _add_output(
        su,
        "--out",
        "--output",
        hint="the output is JSON, on standard output without -o",
        help="write the JSON here (default stdout)",
    )
    _add_mining(su)
    su.set_defaults(handler="qualspec.cli._rubrics:cmd_rubrics_summarize")
    ju = r_sub.add_parser("judge", help="score sessions 1-5 on each rubric, weighted")
    ju.add_argument("sessions", metavar="DIR", help="a session file or a folder of them")
    ju.add_argument(
        "--rubrics", required=True, metavar="PATH", help="the JSON of `rubrics summarize`"
    )
    _add_output(
        ju,
        "--out",
        "--output",
        hint="the scores file is always JSON",
        help="also write the scores as JSON",
    )
    ju.add_argument("--html", metavar="PATH", help="also write an offline HTML page")
    _add_mining(ju)
    ju.set_defaults(handler="qualspec.cli._rubrics:cmd_rubrics_judge")
    fo = r_sub.add_parser("format", help="print a session as the models see it")
    fo.add_argument("session", metavar="SESSION", help="a .jsonl or .json session file")
    fo.add_argument(
        "--max-session-chars",
        type=_positive_int,
        metavar="N",
        help="cut as a model with this room would see it",
    )
    fo.set_defaults(handler="qualspec.cli._rubrics:cmd_rubrics_format")
    return [ex, su, ju, fo]


def dispatch(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Run the chosen command; turn errors into one line each."""
    target = getattr(ns, "handler", None)
    if target is None:
        build_parser().print_help()
        return EXIT_USAGE
    module_name, func_name = target.split(":")
    if getattr(ns, "verbose", 0):
        from qualspec.cli._logging import configure_logging

        configure_logging(ns.verbose)
    refused = _format_as_path(ns)
    if refused is not None:
        _error(refused)
        return EXIT_USAGE
    try:
        import importlib

        handler: Handler = getattr(importlib.import_module(module_name), func_name)
        return handler(ns, argv)
    except KeyboardInterrupt:
        print(
            "qualspec: interrupted; finished results are recorded (resume with --resume)",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except SpecError as exc:
        if ns.debug:
            traceback.print_exc()
        for issue in exc.issues:
            _error(str(issue))
        return EXIT_USAGE
    except ConfigError as exc:
        if ns.debug:
            traceback.print_exc()
        _error(f"qualspec: error: {exc}")
        return EXIT_USAGE
    except AuthenticationError as exc:
        if ns.debug:
            traceback.print_exc()
        _error(f"qualspec: run stopped: authentication failed: {exc}")
        return EXIT_FAILURE
    except QualspecError as exc:
        if ns.debug:
            traceback.print_exc()
        _error(f"qualspec: error: {exc}")
        return EXIT_FAILURE
    except Exception as exc:
        if ns.debug:
            raise
        _error(
            f"qualspec: internal error: {type(exc).__name__}: {exc} (rerun with --debug for "
            "the traceback)"
        )
        return EXIT_FAILURE


def _error(text: str) -> None:
    """Print an error line to stderr, with URL passwords and keys masked."""
    from qualspec.store import display_url

    print(display_url(text), file=sys.stderr)


def _version() -> str:
    from qualspec.version import __version__

    return f"qualspec {__version__}"
