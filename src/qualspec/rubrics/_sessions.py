"""Read coding-assistant sessions: Claude Code transcripts and plain JSON/JSONL chats.

A Claude Code transcript (``~/.claude/projects/<project>/<session-id>.jsonl``) holds one
JSON record per line. Only the main thread is followed: sidechains (sub-agents), meta
records, summaries, file-history snapshots, system records and record types not known
here are skipped. An assistant reply is written one content block per line, the lines
of one reply sharing ``message.id``; tool results come back as ``type: user`` records and
belong to the turn of the tool call, not to a new user turn. Lines that are not JSON
objects, or records without the fields a turn needs, are skipped and counted: the count
is the session's ``warnings``.

A plain chat is a JSON list of ``{"role", "content"}`` messages (or ``{"messages": [...]}``),
or the same messages one per line (JSONL).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qualspec.errors import ConfigError

__all__ = [
    "ChatSession",
    "ToolCall",
    "ToolResult",
    "Turn",
    "find_session_files",
    "read_session",
    "read_sessions",
]

_SKIPPED_TYPES = frozenset({"summary", "file-history-snapshot", "system"})
_SUFFIXES = (".jsonl", ".json")


@dataclass
class ToolCall:
    """One tool use of the assistant: its id, the tool's name and its input."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ToolResult:
    """What a tool returned (text), for the call with ``tool_use_id``."""

    tool_use_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass
class Turn:
    """A user message and everything the assistant did in answer to it."""

    user: str
    assistant: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)


@dataclass
class ChatSession:
    """A session read from a file: its header fields, turns, token usage and skip counts.

    ``usage`` holds one ``usage`` mapping per assistant reply (per ``message.id``).
    ``skipped`` counts what was left out on purpose (sidechains, snapshots, ...);
    ``warnings`` counts what could not be read (invalid lines, records missing fields,
    unknown record types).
    """

    session_id: str
    path: Path | None = None
    timestamp: str | None = None
    git_branch: str | None = None
    cwd: str | None = None
    turns: list[Turn] = field(default_factory=list)
    usage: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    format: str = "claude-code"

    @property
    def user_turns(self) -> int:
        """How many turns start with a user message (all of them: tool results are not)."""
        return sum(1 for t in self.turns if t.user.strip())

    def warning_line(self) -> str | None:
        """One line summing up what could not be read, or None when everything could."""
        if not self.warnings:
            return None
        where = self.path if self.path is not None else self.session_id
        return f"{where}: skipped {len(self.warnings)} unreadable record(s) ({self.warnings[0]})"


def find_session_files(path: str | Path) -> list[Path]:
    """The session files at ``path``: the file itself, or a directory's ``*.jsonl``/``*.json``.

    Raises:
        ConfigError: The path does not exist, or a directory holds no session file.
    """
    p = Path(path).expanduser()
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise ConfigError(f"{p}: no such file or directory: give a session file or a directory")
    files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix in _SUFFIXES)
    if not files:
        raise ConfigError(
            f"{p}: no session files (*.jsonl, *.json) in this directory: "
            "give ~/.claude/projects/<project>/ or a folder of chat files"
        )
    return files


def read_sessions(path: str | Path) -> list[ChatSession]:
    """Every session at ``path`` (a file or a directory), sessions without a turn left out."""
    out = []
    for file in find_session_files(path):
        session = read_session(file)
        if session.turns:
            out.append(session)
    return out


def read_session(path: str | Path) -> ChatSession:
    """Read one session file, Claude Code transcript or plain chat (detected by content).

    Raises:
        ConfigError: The file cannot be read, or it is a ``.json`` file that is not JSON
            (named with its line and column).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read: {exc.strerror or exc}") from None
    stripped = text.lstrip()
    if p.suffix == ".json" or stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if p.suffix == ".json":
                raise ConfigError(
                    f"{p}:{exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno}): "
                    "write a JSON list of {role, content} messages, or use .jsonl"
                ) from None
        else:
            messages = data.get("messages") if isinstance(data, dict) else data
            if not isinstance(messages, list):
                raise ConfigError(
                    f"{p}:1: expected a JSON list of {{role, content}} messages "
                    '(or {"messages": [...]})'
                )
            session = ChatSession(session_id=p.stem, path=p, format="chat")
            _read_chat(session, ((i + 1, m) for i, m in enumerate(messages)))
            return session
    records: list[tuple[int, Any]] = []
    warnings: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((number, json.loads(line)))
        except json.JSONDecodeError:
            warnings.append(f"line {number}: not JSON")
    chat = any(
        isinstance(r, dict) and "role" in r and "message" not in r and "type" not in r
        for _, r in records[:5]
    )
    session = ChatSession(session_id=p.stem, path=p, format="chat" if chat else "claude-code")
    session.warnings.extend(warnings)
    if chat:
        _read_chat(session, records)
    else:
        _read_claude(session, records)
    return session


# ---------------------------------------------------------------- Claude Code


def _skip(session: ChatSession, what: str) -> None:
    session.skipped[what] = session.skipped.get(what, 0) + 1


def _read_claude(session: ChatSession, records: Sequence[tuple[int, Any]]) -> None:
    names: dict[str, str] = {}  # tool_use id -> tool name
    usage: dict[str, dict[str, Any]] = {}  # message.id -> its (last) usage
    current: Turn | None = None
    for number, record in records:
        if not isinstance(record, dict):
            session.warnings.append(f"line {number}: not a JSON object")
            continue
        kind = record.get("type")
        if kind in _SKIPPED_TYPES:
            _skip(session, str(kind))
            continue
        if kind not in ("user", "assistant"):
            session.warnings.append(f"line {number}: unknown record type {kind!r}")
            continue
        if record.get("isSidechain") is True:
            _skip(session, "sidechain")
            continue
        if record.get("isMeta") is True:
            _skip(session, "meta")
            continue
        message = record.get("message")
        if not isinstance(message, dict) or "content" not in message:
            session.warnings.append(f"line {number}: {kind} record without message.content")
            continue
        _header(session, record)
        blocks = _blocks(message.get("content"))
        if kind == "assistant":
            if current is None:  # an answer before any user message: a turn of its own
                current = Turn(user="")
                session.turns.append(current)
            _assistant(current, blocks, names)
            msg_id = message.get("id")
            if isinstance(message.get("usage"), dict):
                usage[str(msg_id) if msg_id is not None else f"line{number}"] = message["usage"]
            continue
        texts = [_user_text(b) for b in blocks if b.get("type") in ("text", "image")]
        texts = [t for t in texts if t.strip()]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if not texts and not results:  # images only, or an empty message
            _skip(session, "empty")
            continue
        if texts and not results:
            current = Turn(user="\n\n".join(texts))
            session.turns.append(current)
            continue
        if current is None:
            current = Turn(user="")
            session.turns.append(current)
        for block in results:
            tool_id = str(block.get("tool_use_id", ""))
            current.tool_results.append(
                ToolResult(
                    tool_use_id=tool_id,
                    name=names.get(tool_id, "tool"),
                    content=_result_text(block.get("content")),
                    is_error=block.get("is_error") is True,
                )
            )
    session.usage = list(usage.values())


def _header(session: ChatSession, record: dict[str, Any]) -> None:
    if session.timestamp is None and isinstance(record.get("timestamp"), str):
        session.timestamp = record["timestamp"]
    if session.cwd is None and isinstance(record.get("cwd"), str):
        session.cwd = record["cwd"]
    if session.git_branch is None and isinstance(record.get("gitBranch"), str):
        session.git_branch = record["gitBranch"] or None
    if isinstance(record.get("sessionId"), str) and session.session_id == _stem(session):
        session.session_id = record["sessionId"]


def _stem(session: ChatSession) -> str:
    return session.path.stem if session.path is not None else session.session_id


def _blocks(content: Any) -> list[dict[str, Any]]:
    """Content as a list of blocks: a string is one text block; odd items are dropped."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _user_text(block: dict[str, Any]) -> str:
    if block.get("type") == "image":
        return "[image]"
    text = block.get("text")
    return text if isinstance(text, str) else ""


def _assistant(turn: Turn, blocks: Iterable[dict[str, Any]], names: dict[str, str]) -> None:
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            turn.assistant.append(block["text"])
        elif kind == "tool_use":
            call = ToolCall(
                id=str(block.get("id", "")),
                name=str(block.get("name", "tool")),
                input=block["input"] if isinstance(block.get("input"), dict) else {},
            )
            names[call.id] = call.name
            turn.tool_calls.append(call)
        # thinking (and redacted_thinking) blocks are internal reasoning: left out


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict) and block.get("type") == "image":
                parts.append("[image]")
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    return "" if content is None else json.dumps(content)


# ---------------------------------------------------------------- plain chats


def _read_chat(session: ChatSession, messages: Iterable[tuple[int, Any]]) -> None:
    current: Turn | None = None
    for number, message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            session.warnings.append(f"line {number}: not a {{role, content}} message")
            continue
        role = message["role"]
        content = message.get("content")
        text = content if isinstance(content, str) else _result_text(content)
        if role == "system":
            _skip(session, "system")
        elif role == "user":
            current = Turn(user=text)
            session.turns.append(current)
        elif role in ("assistant", "tool"):
            if current is None:
                current = Turn(user="")
                session.turns.append(current)
            if role == "tool":
                name = str(message.get("name", "tool"))
                tool_id = str(message.get("tool_call_id", ""))
                current.tool_results.append(ToolResult(tool_id, name, text))
                continue
            if text.strip():
                current.assistant.append(text)
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict):
                    current.tool_calls.append(_chat_tool_call(call))
        else:
            session.warnings.append(f"line {number}: unknown role {role!r}")


def _chat_tool_call(call: dict[str, Any]) -> ToolCall:
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    args: Any = function.get("arguments", {}) if isinstance(function, dict) else {}
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            args = {"arguments": args}
    name = function.get("name", "tool") if isinstance(function, dict) else "tool"
    return ToolCall(str(call.get("id", "")), str(name), args if isinstance(args, dict) else {})
