"""Two small text helpers every layer uses: a "did you mean" hint and a one-line message.

The lowest layer of the package (beside :mod:`qualspec.errors`): it imports nothing of
qualspec, so providers, the store, the engine and the CLI can all use it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["closest", "did_you_mean", "one_line"]


def closest(word: str, options: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The option closest to ``word`` (a likely typo of it), or None when none is close.

    Example:
        >>> closest("critera", ["criteria", "expect"])
        'criteria'
    """
    found = difflib.get_close_matches(word, list(options), n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(
    word: str,
    options: Iterable[str],
    *,
    cutoff: float = 0.6,
    before: str = "",
    after: str = "",
) -> str:
    """``"did you mean 'x'?"`` (between ``before`` and ``after``) for the option closest to
    ``word``, or ``""`` when none is close.

    Example:
        >>> did_you_mean("critera", ["criteria", "expect"])
        "did you mean 'criteria'?"
        >>> did_you_mean("critera", ["criteria"], before="; ")
        "; did you mean 'criteria'?"
        >>> did_you_mean("zzz", ["criteria"])
        ''
    """
    found = closest(word, options, cutoff=cutoff)
    return f"{before}did you mean '{found}'?{after}" if found else ""


def one_line(text: str | BaseException, limit: int | None = None) -> str:
    """``text`` with its whitespace runs (newlines included) made single spaces, cut to
    ``limit`` characters (ending ``...``) when given. An exception gives its message, or
    its type's name when the message is empty.

    Example:
        >>> one_line("a\\n  b", limit=10)
        'a b'
        >>> one_line("abcdefghij", limit=6)
        'abc...'
        >>> one_line(KeyError())
        'KeyError'
    """
    if isinstance(text, BaseException):
        return one_line(str(text), limit) or type(text).__name__
    line = " ".join(text.split())
    if limit is not None and len(line) > limit:
        line = line[: limit - 3] + "..."
    return line
