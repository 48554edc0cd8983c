"""Find JSON objects inside free text and repair the usual small-model mistakes.

Handles: prose or code fences around the object, single-quoted strings, unquoted keys,
trailing commas and Python's ``True``/``False``/``None``. Nothing here guesses values: a
block that still does not parse after repair is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "FAILED",
    "PairsHook",
    "close_truncated",
    "find_json_blocks",
    "loads_lenient",
    "loads_strict",
]

FAILED: Final[Any] = object()
"""Returned by the ``loads_*`` functions when the text is not (repairable) JSON."""

_MAX_SCAN_CHARS = 20_000
_MAX_BLOCKS = 20
_MAX_RESTARTS = 50
_PY_CONSTANTS = {"True": "true", "False": "false", "None": "null"}
_OPENERS = "{[,:"
_CLOSERS = ",}]:"

PairsHook = Callable[[list[tuple[str, Any]]], Any]
"""An ``object_pairs_hook`` for :func:`json.loads` (say, one that flags duplicate keys)."""


def loads_strict(text: str, pairs_hook: PairsHook | None = None) -> Any:
    """Parse ``text`` as JSON; return :data:`FAILED` when it is not JSON.

    ``pairs_hook`` is passed to :func:`json.loads` as ``object_pairs_hook``.
    """
    try:
        return json.loads(text, object_pairs_hook=pairs_hook)
    except (ValueError, RecursionError):
        return FAILED


def loads_lenient(block: str, pairs_hook: PairsHook | None = None) -> Any:
    """Parse one ``{...}`` block, first as is, then repaired; ``FAILED`` if neither works."""
    value = loads_strict(block, pairs_hook)
    if value is not FAILED:
        return value
    return loads_strict(_repair(block), pairs_hook)


def _next_significant(text: str, start: int) -> str:
    for i in range(start, len(text)):
        if not text[i].isspace():
            return text[i]
    return ""


def _string_end(text: str, start: int, quote: str) -> int:
    """Index of the quote closing the string opened at ``start`` (``len(text)`` if none).

    A single quote only closes a string when followed by ``, } ] :`` or the end, so
    apostrophes inside single-quoted strings (``'it's fine'``) survive.
    """
    escaped = False
    for i in range(start + 1, len(text)):
        ch = text[i]
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == quote and (quote == '"' or _next_significant(text, i + 1) in ("", *_CLOSERS)):
            return i
    return len(text)


def _block_end(text: str, start: int) -> int:
    """Index of the ``}`` closing the ``{`` at ``start``, or -1 when unbalanced."""
    depth = 0
    last = ""
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"' or (ch == "'" and last in _OPENERS):
            i = _string_end(text, i, ch)
            last = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        if not ch.isspace():
            last = ch
        i += 1
    return -1


def find_json_blocks(text: str) -> list[tuple[int, int]]:
    """Return ``(start, end)`` spans of the top-level balanced ``{...}`` blocks in ``text``.

    An unbalanced ``{`` (say, in prose) is skipped and the scan goes on after it, so a real
    object later in the text is still found. Code fences need no special case: the object
    inside a fence is found like any other.
    """
    text = text[:_MAX_SCAN_CHARS]
    spans: list[tuple[int, int]] = []
    pos = 0
    restarts = 0
    while len(spans) < _MAX_BLOCKS and restarts <= _MAX_RESTARTS:
        start = text.find("{", pos)
        if start < 0:
            break
        end = _block_end(text, start)
        if end < 0:
            restarts += 1
            pos = start + 1
            continue
        spans.append((start, end + 1))
        pos = end + 1
    return spans


def close_truncated(text: str) -> str | None:
    """A JSON object cut off mid-way (an answer that ran out of tokens), made whole.

    ``text`` starts at the object's ``{``. It is cut back to its last comma outside strings
    and the brackets still open there are closed: ``{"score": 8, "reasoning": "Good bu``
    becomes ``{"score": 8}``. Only members finished before a comma are kept, so a value cut
    short (``{"score": 1`` of a ``10``) is never read. ``None`` when the object is not cut
    off (its braces balance) or no member was finished.
    """
    text = text[:_MAX_SCAN_CHARS]
    stack: list[str] = []
    cut: tuple[int, str] | None = None  # the last comma, and the closers needed there
    last = ""
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"' or (ch == "'" and last in _OPENERS):
            i = _string_end(text, i, ch)
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack[-1] != ch:
                return None
            stack.pop()
            if not stack:
                return None  # balanced: not cut off
        elif ch == "," and stack:
            cut = (i, "".join(reversed(stack)))
        if not ch.isspace():
            last = ch
        i += 1
    if cut is None:
        return None
    pos, closers = cut
    return text[:pos] + closers


def _repair(block: str) -> str:
    out: list[str] = []
    last = ""  # last significant character written
    i = 0
    n = len(block)
    while i < n:
        ch = block[i]
        if ch == '"':
            end = _string_end(block, i, '"')
            out.append(block[i : end + 1])
            last, i = '"', end + 1
            continue
        if ch == "'" and last in _OPENERS:
            end = _string_end(block, i, "'")
            content = block[i + 1 : end].replace("\\'", "'").replace('\\"', '"')
            out.append(json.dumps(content))
            last, i = '"', end + 1
            continue
        if ch == "," and _next_significant(block, i + 1) in ("}", "]"):
            i += 1  # trailing comma
            continue
        if ch.isalpha() or ch == "_":
            end = i
            while end < n and (block[end].isalnum() or block[end] == "_"):
                end += 1
            word = block[i:end]
            if last in "{," and _next_significant(block, end) == ":":
                out.append(json.dumps(word))  # unquoted key
            else:
                out.append(_PY_CONSTANTS.get(word, word))
            last, i = word[-1], end
            continue
        out.append(ch)
        if not ch.isspace():
            last = ch
        i += 1
    return "".join(out)
