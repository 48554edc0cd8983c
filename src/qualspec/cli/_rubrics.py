"""``qualspec rubrics``: extract rubrics from good sessions, consolidate them, judge sessions."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from qualspec.cli._args import (
    Commands,
    add_db,
    add_output,
    non_negative_int,
    number,
    positive_float,
    positive_int,
)

if TYPE_CHECKING:
    from qualspec.rubrics import ChatSession, MiningOptions

__all__ = [
    "add_parser",
    "cmd_rubrics_extract",
    "cmd_rubrics_format",
    "cmd_rubrics_judge",
    "cmd_rubrics_summarize",
]


def _options(ns: argparse.Namespace) -> MiningOptions:
    from qualspec.providers import split_address
    from qualspec.rubrics import MiningOptions
    from qualspec.spec import DEFAULT_JUDGE_MODEL

    model = ns.model or DEFAULT_JUDGE_MODEL
    split_address(model)  # a malformed address: one line, exit 2
    return MiningOptions(
        model=model,
        retries=ns.retries,
        max_session_chars=ns.max_session_chars,
        max_tokens=ns.max_tokens,
    )


def _read(path: str) -> list[ChatSession]:
    from qualspec.errors import ConfigError
    from qualspec.rubrics import read_sessions

    chats = read_sessions(path)
    for chat in chats:
        line = chat.warning_line()
        if line is not None:
            print(f"qualspec: warning: {line}", file=sys.stderr)
    if not chats:
        raise ConfigError(f"{path}: no session with a user or assistant message in it")
    return chats


def _progress(ns: argparse.Namespace) -> Any:
    if getattr(ns, "quiet", False):
        return None
    return lambda line: print(f"  {line}", file=sys.stderr)


def _write_json(data: Any, path: str | None) -> None:
    import json

    from qualspec.report import write_json_atomic

    if path is None:
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        write_json_atomic(path, data)


async def _in_session(ns: argparse.Namespace, options: MiningOptions, work: Any) -> Any:
    from qualspec.engine import ExecuteOptions, Session
    from qualspec.providers import split_address

    # --timeout: each attempt's limit, as ``qualspec run --timeout``
    execute = ExecuteOptions(max_cost=ns.max_cost, timeout=ns.timeout)
    async with Session(db=ns.db, options=execute) as session:
        session.calls.providers([split_address(options.model)[0]])  # unknown provider: exit 2
        return await work(session)


def add_parser(commands: Commands) -> None:
    """``qualspec rubrics extract|summarize|judge|format``."""
    rubrics = commands.add_parser(
        "rubrics", help="mine rubrics from coding-assistant sessions and judge sessions by them"
    )
    actions = rubrics.add_subparsers(dest="rubrics_command", metavar="ACTION", required=True)
    _add_extract(actions)
    _add_summarize(actions)
    _add_judge(actions)
    _add_format(actions)


def _add_json_out_and_mining(parser: argparse.ArgumentParser) -> None:
    """``-o/--out/--output`` for the JSON, and the mining flags (extract and summarize)."""
    add_output(
        parser,
        "--out",
        "--output",
        hint="the output is JSON, on standard output without -o",
        help="write the JSON here (default stdout)",
    )
    _add_mining(parser)


def _add_mining(parser: argparse.ArgumentParser) -> None:
    """The model flags of the rubric commands that call a model."""
    parser.add_argument(
        "--model",
        metavar="PROVIDER/MODEL",
        help="the model that reads the sessions (default local/smollm2)",
    )
    parser.add_argument(
        "--retries",
        type=non_negative_int,
        default=2,
        metavar="N",
        help="ask again up to N times when an answer cannot be read (default 2)",
    )
    parser.add_argument(
        "--max-session-chars",
        type=positive_int,
        metavar="N",
        help="cut longer sessions, with a visible marker (default: what fits the model)",
    )
    parser.add_argument(
        "--max-tokens", type=positive_int, metavar="N", help="the answer's token limit"
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=120.0,
        metavar="SECONDS",
        help="per-attempt timeout of a model call (default 120)",
    )
    parser.add_argument("--max-cost", type=positive_float, metavar="USD", help="stop at this cost")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    add_db(parser)


def _add_format(actions: Commands) -> None:
    fo = actions.add_parser("format", help="print a session as the models see it")
    fo.add_argument("session", metavar="SESSION", help="a .jsonl or .json session file")
    fo.add_argument(
        "--max-session-chars",
        type=positive_int,
        metavar="N",
        help="cut as a model with this room would see it",
    )
    fo.set_defaults(handler=cmd_rubrics_format)


def cmd_rubrics_format(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print a session as the models see it (secrets redacted, cut as for --model)."""
    from qualspec.rubrics import fit_to_context, format_session, read_session

    session = read_session(ns.session)
    line = session.warning_line()
    if line is not None:
        print(f"qualspec: warning: {line}", file=sys.stderr)
    text = format_session(session)
    if ns.max_session_chars is not None:
        text = fit_to_context(text, ns.max_session_chars)
    sys.stdout.write(text + "\n")
    return 0


def _add_extract(actions: Commands) -> None:
    ex = actions.add_parser("extract", help="extract rubrics from each (selected) session")
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
        type=positive_int,
        default=3,
        metavar="N",
        help="rubrics per session, at least (default 3)",
    )
    ex.add_argument(
        "--max",
        type=positive_int,
        default=7,
        metavar="N",
        help="rubrics per session, at most (default 7)",
    )
    ex.add_argument(
        "--min-score",
        type=number,
        metavar="X",
        help="only sessions scoring X or more (their label, else the --score-name metric)",
    )
    ex.add_argument(
        "--labels",
        metavar="PATH",
        help='scores per session: JSON {"<session id>": score} or CSV session_id,score',
    )
    _add_json_out_and_mining(ex)
    ex.set_defaults(handler=cmd_rubrics_extract)


def cmd_rubrics_extract(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Extract rubrics from each (selected) session of a directory."""
    from qualspec.engine import run_sync
    from qualspec.errors import ConfigError
    from qualspec.rubrics import extract_rubrics, load_labels, select_sessions

    if ns.min > ns.max:
        raise ConfigError(f"--min {ns.min} is above --max {ns.max}: give --min <= --max")
    options = _options(ns)
    chats = _read(ns.sessions)
    labels = load_labels(ns.labels) if ns.labels else None
    chosen = select_sessions(chats, score_name=ns.score_name, min_score=ns.min_score, labels=labels)
    if not chosen:
        raise ConfigError(
            f"no session of {len(chats)} meets the selection (--min-score {ns.min_score}): "
            "lower --min-score or label more sessions"
        )
    print(f"Extracting rubrics from {len(chosen)} of {len(chats)} session(s)", file=sys.stderr)

    async def work(session: Any) -> dict[str, Any]:
        return await extract_rubrics(
            session,
            chosen,
            options,
            score_name=ns.score_name,
            min_rubrics=ns.min,
            max_rubrics=ns.max,
            progress=_progress(ns),
        )

    result = run_sync(lambda: _in_session(ns, options, work))
    _write_json(result, ns.out)
    failed = [s for s in result["sessions"] if s["error"]]
    for entry in failed:
        print(f"qualspec: warning: {entry['session_id']}: {entry['error']}", file=sys.stderr)
    print(
        f"{len(result['rubrics'])} rubric(s) from {len(chosen) - len(failed)} of {len(chosen)} "
        f"session(s){' -> ' + ns.out if ns.out else ''}",
        file=sys.stderr,
    )
    return 0 if result["rubrics"] else 1


def _add_summarize(actions: Commands) -> None:
    su = actions.add_parser("summarize", help="consolidate extracted rubrics into 5-10 final ones")
    su.add_argument("extracted", metavar="EXTRACTED", help="the JSON of `rubrics extract`")
    _add_json_out_and_mining(su)
    su.set_defaults(handler=cmd_rubrics_summarize)


def cmd_rubrics_summarize(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Consolidate extracted rubrics into the final set."""
    from qualspec.engine import run_sync
    from qualspec.rubrics import load_extracted, summarize_rubrics

    options = _options(ns)
    extracted = load_extracted(ns.extracted)

    async def work(session: Any) -> dict[str, Any]:
        return await summarize_rubrics(session, extracted, options)

    result = run_sync(lambda: _in_session(ns, options, work))
    result["source"] = str(ns.extracted)
    _write_json(result, ns.out)
    if result["error"]:
        print(f"qualspec: error: no rubrics: {result['error']}", file=sys.stderr)
        return 1
    for problem in result["problems"]:
        print(f"qualspec: warning: {problem}", file=sys.stderr)
    for rubric in result["rubrics"]:
        print(f"  {rubric['id']}  {rubric['name']} (weight {rubric['weight']:g})", file=sys.stderr)
    return 0


def _add_judge(actions: Commands) -> None:
    ju = actions.add_parser("judge", help="score sessions 1-5 on each rubric, weighted")
    ju.add_argument("sessions", metavar="DIR", help="a session file or a folder of them")
    ju.add_argument(
        "--rubrics", required=True, metavar="PATH", help="the JSON of `rubrics summarize`"
    )
    add_output(
        ju,
        "--out",
        "--output",
        hint="the scores file is always JSON",
        help="also write the scores as JSON",
    )
    ju.add_argument("--html", metavar="PATH", help="also write an offline HTML page")
    _add_mining(ju)
    ju.set_defaults(handler=cmd_rubrics_judge)


def cmd_rubrics_judge(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Score each session on each rubric; print a table, write JSON and HTML."""
    from qualspec.engine import run_sync
    from qualspec.rubrics import judge_sessions, load_rubrics

    options = _options(ns)
    rubrics = load_rubrics(ns.rubrics)
    chats = _read(ns.sessions)

    async def work(session: Any) -> dict[str, Any]:
        return await judge_sessions(session, chats, rubrics, options, progress=_progress(ns))

    result = run_sync(lambda: _in_session(ns, options, work))
    if ns.out:
        _write_json(result, ns.out)
    if ns.html:
        from qualspec.report import write_sessions_html

        write_sessions_html(result, ns.html)
    print(_table(result))
    if ns.html:
        print(f"HTML: {ns.html}")
    return 0


def _table(result: dict[str, Any]) -> str:
    """The console table: one row per session, a column per rubric, the weighted score."""
    ids = [r["id"] for r in result["rubrics"]]
    short = [rid.removeprefix("rubric_") for rid in ids]
    width = max([len("session"), *(len(s["session_id"][:36]) for s in result["sessions"])])
    head = f"{'session':<{width}}  " + " ".join(f"{s:>4}" for s in short) + "  weighted"
    lines = [head, "-" * len(head)]
    for entry in result["sessions"]:
        by_id = {s["rubric_id"]: s["score"] for s in entry["scores"]}
        cells = " ".join(f"{'-' if by_id.get(r) is None else by_id[r]:>4}" for r in ids)
        weighted = entry["weighted_score"]
        shown = "-" if weighted is None else f"{weighted:.2f}"
        cut = " (cut)" if entry.get("cut") else ""
        lines.append(f"{entry['session_id'][:36]:<{width}}  {cells}  {shown:>8}{cut}")
    lines.append("")
    lines += [
        f"{s:>4} = {r['name']} (weight {r['weight']:g})"
        for s, r in zip(short, result["rubrics"], strict=True)
    ]
    unscored = sum(1 for e in result["sessions"] for s in e["scores"] if s["score"] is None)
    if unscored:
        lines.append(f"'-': unscored ({unscored}): the judge's answer had no valid 1-5 score")
    return "\n".join(lines)
