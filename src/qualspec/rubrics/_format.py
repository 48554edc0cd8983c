"""A session as the models see it: the seed's standard chat session format.

::

    === Chat Session ===
    Session ID: {session_id}
    Timestamp: {start_timestamp}
    Git Branch: {git_branch}            (only when known)
    Working Directory: {cwd}

    --- Turn 1 ---
    [USER]
    ...
    [ASSISTANT]                          (the turn's text replies, in order)
    [TOOL_CALLS]                         (- name: key input parameters)
    [TOOL_RESULTS]                       (- name: result, cut past 500 characters)

    === End Session ===
    Total Turns: {turn_count}

Sections with nothing in them are left out (a turn without tool calls has no
``[TOOL_CALLS]``). Thinking blocks and file snapshots never appear. Every secret that looks
like an API key or a token is replaced by ``***`` (:func:`~qualspec.store.redact_text`),
in each text before it is cut (a key that straddles the cut is hidden whole, and a cut
marker is never swallowed).
"""

from __future__ import annotations

import json
from typing import Any

from qualspec.rubrics._sessions import ChatSession, ToolCall, ToolResult
from qualspec.store import redact_text

__all__ = [
    "CUT_MARKER",
    "RESULT_LIMIT",
    "fit_to_context",
    "format_session",
    "summarize_input",
]

RESULT_LIMIT = 500
"""Tool results longer than this many characters are cut, with ``... (truncated)``."""
TRUNCATED = "... (truncated)"
CUT_MARKER = "[... {omitted} characters of the session cut here to fit the model's context ...]"
_VALUE_LIMIT = 120
# The input parameters that say what a tool call did, most telling first.
_KEY_PARAMS = (
    "command",
    "file_path",
    "notebook_path",
    "path",
    "pattern",
    "glob",
    "url",
    "query",
    "description",
    "subagent_type",
    "prompt",
)
# Inputs that carry bulk content, never shown (their size is what code growth counts).
_BULK_PARAMS = frozenset({"content", "old_string", "new_string", "edits", "new_source"})


def format_session(session: ChatSession) -> str:
    """The session in the standard format, secrets redacted (see the module docstring)."""
    # each text is redacted whole, before anything is cut: a cut through a key would leave
    # a prefix no pattern knows, and a hidden value would swallow the cut marker
    lines = [
        "=== Chat Session ===",
        f"Session ID: {redact_text(session.session_id)}",
        f"Timestamp: {session.timestamp or 'unknown'}",
    ]
    if session.git_branch:
        lines.append(f"Git Branch: {redact_text(session.git_branch)}")
    lines.append(f"Working Directory: {redact_text(session.cwd or 'unknown')}")
    for number, turn in enumerate(session.turns, start=1):
        user = redact_text(turn.user.strip()) or "(no message)"
        lines += ["", f"--- Turn {number} ---", "[USER]", user]
        if turn.assistant:
            replies = "\n\n".join(redact_text(t.strip()) for t in turn.assistant)
            lines += ["", "[ASSISTANT]", replies]
        if turn.tool_calls:
            lines += ["", "[TOOL_CALLS]"]
            lines += [f"- {call.name}: {summarize_input(call)}" for call in turn.tool_calls]
        if turn.tool_results:
            lines += ["", "[TOOL_RESULTS]"]
            lines += [_result_line(result) for result in turn.tool_results]
    lines += ["", "=== End Session ===", f"Total Turns: {len(session.turns)}"]
    return "\n".join(lines)


def summarize_input(call: ToolCall) -> str:
    """The key input parameters of a tool call on one line: ``command="ls -la"``.

    The parameters that say what the call did (command, file path, pattern, URL, query,
    description...); without any of those, the first three non-bulk parameters. Bulk
    content (a file's text, an edit's strings) is never shown. Values are cut at 120
    characters, after their secrets are hidden (:func:`~qualspec.store.redact_text`).
    """
    params = call.input
    keys = [k for k in _KEY_PARAMS if k in params]
    if not keys:
        keys = [k for k in params if k not in _BULK_PARAMS][:3]
    if not keys:
        return "(no input)" if not params else f"({', '.join(sorted(params))})"
    return ", ".join(f"{k}={_value(params[k])}" for k in keys)


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    text = redact_text(text)  # before the cut
    shown = json.dumps(text[:_VALUE_LIMIT], ensure_ascii=False)
    return shown if len(text) <= _VALUE_LIMIT else shown[:-1] + '..."'


def _result_line(result: ToolResult) -> str:
    content = redact_text(result.content.strip("\n").rstrip())  # before the cut
    if len(content) > RESULT_LIMIT:
        content = content[:RESULT_LIMIT] + TRUNCATED
    label = f"{result.name} (error)" if result.is_error else result.name
    return f"- {label}: {content or '(empty)'}"


def fit_to_context(text: str, max_chars: int) -> str:
    """``text`` cut to about ``max_chars`` with a visible marker, or unchanged if it fits.

    The start (two thirds) and the end (one third, with the session's total) are kept; the
    marker in between says how many characters were left out. Never silent.
    """
    if len(text) <= max_chars:
        return text
    marker_room = len(CUT_MARKER) + 20
    keep = max(max_chars - marker_room, 0)
    head = keep * 2 // 3
    tail = keep - head
    omitted = len(text) - head - tail
    marker = CUT_MARKER.format(omitted=omitted)
    end = text[len(text) - tail :] if tail else ""
    return f"{text[:head]}\n\n{marker}\n\n{end}"
