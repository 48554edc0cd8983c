"""``qualspec rubrics``: extract rubrics from good sessions, consolidate them, judge sessions."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.rubrics import ChatSession, MiningOptions

__all__ = [
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
    from qualspec.report import write_json_atomic

    if path is None:
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        write_json_atomic(path, data)


async def _in_session(ns: argparse.Namespace, options: MiningOptions, work: Any) -> Any:
    from qualspec.engine import Session
    from qualspec.providers import split_address

    async with Session(db=ns.db, max_cost=ns.max_cost) as session:
        session.calls.providers([split_address(options.model)[0]])  # unknown provider: exit 2
        return await work(session)


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
