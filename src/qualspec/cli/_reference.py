"""``qualspec reference list|show|validate|dispute|needs-review|override``.

A reference answer is named by its call key (the cache key of its call) or a unique
prefix of it, as ``reference list`` shows. "Who" is ``$QUALSPEC_USER``, else the OS user.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qualspec.cli._args import Commands, add_db
from qualspec.errors import ConfigError

if TYPE_CHECKING:
    from datetime import datetime

    from qualspec.store import ReferenceAnswer, ReferenceReview

__all__ = [
    "add_parser",
    "cmd_reference_list",
    "cmd_reference_override",
    "cmd_reference_show",
    "cmd_reference_status",
]

_SHORT = 12  # characters of a call key shown in lists (any unique prefix is accepted)


def _stamp(value: datetime | None) -> str:
    return "-" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def _model(answer: ReferenceAnswer) -> str:
    return f"{answer.provider}/{answer.model}"


def _status(answer: ReferenceAnswer) -> str:
    """The status that applies to the answer now, saying so when the answer changed or
    when a review of the same input's reference under another prompt does not apply."""
    review = answer.review
    now = answer.current_status()
    other = answer.other_review
    if review.updated_at is None and other is not None:
        return f"{now} (another prompt's {other.call_key[:_SHORT]} was {other.status})"
    if now != review.status:
        return f"{now} (was {review.status}: the answer changed since)"
    return now


def add_parser(commands: Commands) -> None:
    """``qualspec reference list|show|validate|dispute|needs-review|override``."""
    reference = commands.add_parser(
        "reference", help="reference answers: list, show, validate, dispute, override"
    )
    actions = reference.add_subparsers(dest="reference_command", metavar="ACTION", required=True)
    rfl = actions.add_parser("list", help="the reference answers with their review status")
    rfl.add_argument(
        "--status",
        metavar="S",
        help="only this status: unvalidated, validated, needs_review, disputed",
    )
    rfl.add_argument("--run", metavar="RUN", help="only the references this run used")
    rfl.set_defaults(handler=cmd_reference_list)
    rfs = actions.add_parser("show", help="a reference answer, its status, notes and audit trail")
    rfs.set_defaults(handler=cmd_reference_show)
    ref_commands = [rfl, rfs]
    for action, what in (
        ("validate", "mark a reference answer validated (checked by a person)"),
        ("dispute", "mark a reference answer disputed (a person thinks it is wrong)"),
        ("needs-review", "mark a reference answer as needing review"),
    ):
        status_cmd = actions.add_parser(action, help=what)
        status_cmd.add_argument("--notes", metavar="TEXT", help="why (kept with the review)")
        status_cmd.set_defaults(handler=cmd_reference_status)
        ref_commands.append(status_cmd)
    rfo = actions.add_parser(
        "override", help="replace a reference answer by a corrected JSON file (audited)"
    )
    rfo.add_argument(
        "--file", required=True, metavar="PATH", help="the corrected answer, a JSON file"
    )
    rfo.add_argument("--notes", metavar="TEXT", help="why (kept with the review)")
    rfo.set_defaults(handler=cmd_reference_override)
    ref_commands.append(rfo)
    for command in ref_commands[1:]:
        command.add_argument("id", metavar="ID", help="call key or unique prefix (reference list)")
    for command in ref_commands:
        add_db(command)


def cmd_reference_list(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """List the distinct reference answers with their review status."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from qualspec.store import Store

    with Store.open(ns.db) as store:
        answers = store.reference_answers(status=ns.status, run_id=ns.run)
    if not answers:
        print(
            "No reference answers match"
            if ns.status or ns.run
            else "No reference answers recorded yet: a scenario with a reference model makes them"
        )
        return 0
    console = Console(highlight=False)
    table = Table()
    table.add_column("id", no_wrap=True, min_width=_SHORT)
    table.add_column("status", no_wrap=True)
    table.add_column("model", overflow="fold")
    table.add_column("scenario", overflow="fold")
    table.add_column("input", overflow="fold")
    table.add_column("latest run", no_wrap=True)
    table.add_column("created (UTC)", no_wrap=True)
    for a in answers:
        status = _status(a) + (" (override)" if a.review.override_text is not None else "")
        if a.error is not None and a.review.override_text is None:
            status += " (error)"
        table.add_row(
            Text(a.call_key[:_SHORT]),
            Text(status),
            Text(_model(a)),
            Text(a.scenario),
            Text(a.input_id or "-"),
            Text(a.latest_run),
            _stamp(a.created_at),
        )
    console.print(table)
    return 0


def _answer(store: Any, ident: str) -> ReferenceAnswer:
    key = store.find_reference(ident)
    found = store.reference_answers(call_keys=[key])
    if not found:  # reviewed, but its answers are gone (their runs were deleted)
        from qualspec.errors import UnknownReferenceError

        raise UnknownReferenceError(
            f"the reference answer '{ident}' has a review but no stored answer (its runs "
            "were deleted): see `qualspec reference list`"
        )
    answer: ReferenceAnswer = found[0]
    return answer


def _indent(text: str | None, pad: str = "    ") -> str:
    if text is None:
        return pad + "(none)"
    return "\n".join(pad + line for line in (text.splitlines() or [""]))


def cmd_reference_show(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print one reference answer (the override if any, marked), its status, notes and
    the whole audit trail."""
    from qualspec.store import Store

    with Store.open(ns.db) as store:
        a = _answer(store, ns.id)
    review = a.review
    lines = [
        f"reference  {a.call_key}",
        f"model      {_model(a)}",
        f"scenario   {a.scenario}",
        f"input      {a.input_id or '-'}",
        f"runs       {a.runs} (latest {a.latest_run}); first recorded {_stamp(a.created_at)} UTC",
        f"status     {_status(a)}"
        + (
            f" (validated {_stamp(review.human_validated_at)} UTC)"
            if review.human_validated_at
            else ""
        ),
        f"notes      {review.validation_notes or '-'}",
    ]
    if review.override_text is not None:
        lines += ["answer     OVERRIDE (written by a person; graders use it):"]
        lines += [_indent(review.override_text)]
        lines += ["model's answer (replaced):", _indent(a.text if a.error is None else None)]
    else:
        lines += ["answer     (the model's):"]
        lines += [_indent(a.text) if a.error is None else f"    (failed: {a.error})"]
    lines += [f"audit trail ({len(review.audit)})" + (":" if review.audit else ": no changes yet")]
    for entry in review.audit:
        head = f"  {_stamp(entry.when)} UTC  {entry.who}  {entry.action}"
        if entry.action == "override":
            lines += [head + (f"  notes: {entry.notes}" if entry.notes else "")]
            lines += ["    before:", _indent(entry.before, " " * 6)]
            lines += ["    after:", _indent(entry.after, " " * 6)]
        else:
            lines += [
                f"{head}  {entry.before} -> {entry.after}"
                + (f"  notes: {entry.notes}" if entry.notes else "")
            ]
    print("\n".join(lines))
    return 0


_STATUS_OF = {
    "validate": "validated",
    "dispute": "disputed",
    "needs-review": "needs_review",
}


def _report(key: str, before: str, review: ReferenceReview, who: str) -> None:
    print(f"reference {key[:_SHORT]}: {before} -> {review.status} (by {who})")


def cmd_reference_status(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """``validate``, ``dispute`` or ``needs-review``: set the status, with notes."""
    from qualspec.store import Store, reviewer

    status = _STATUS_OF[ns.reference_command]
    who = reviewer()
    with Store.open(ns.db) as store:
        key = store.find_reference(ns.id)
        known = store.reference_review(key)
        before = known.status if known is not None else "unvalidated"
        review = store.set_reference_status(key, status, ns.notes, who)
    _report(key, before, review, who)
    return 0


def _read_override(path: Path) -> tuple[str, Any]:
    """The file's text and its JSON value; ConfigError (exit 2) when unreadable or not JSON."""
    import json

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file: give the corrected answer's JSON file") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"{path}: cannot read it ({reason}): give a UTF-8 JSON file") from None
    if not text.strip():
        raise ConfigError(f"{path}: the file is empty: write the corrected answer as JSON")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg}): write the corrected "
            "answer as JSON"
        ) from None
    return text.strip(), value


def cmd_reference_override(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Replace a reference answer by the JSON in ``--file`` (audited; it becomes validated)."""
    from qualspec.store import Store, reviewer, schema_problem

    path = Path(ns.file)
    text, value = _read_override(path)
    who = reviewer()
    with Store.open(ns.db) as store:
        answer = _answer(store, ns.id)
        if answer.output_schema is not None:
            problem = schema_problem(value, answer.output_schema)
            if problem is not None:
                raise ConfigError(
                    f"{path}: does not match the output_schema of scenario "
                    f"'{answer.scenario}': {problem}"
                )
        before = answer.review.status
        review = store.override_reference(answer.call_key, text, ns.notes, who)
    _report(answer.call_key, before, review, who)
    print(f"override recorded from {path}: graders grade against it from now on")
    return 0
