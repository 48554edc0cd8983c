"""What the command modules' parsers share: argument types and the common flags.

Each command module adds its own subcommand (``add_parser``) next to its ``cmd_*``
function, with these. Imported when the parser is built, so it imports nothing heavy.
"""

from __future__ import annotations

import argparse
import math
from typing import TypeAlias

__all__ = [
    "Commands",
    "add_cache_ttl",
    "add_db",
    "add_output",
    "cache_ttl",
    "format_as_path",
    "non_negative_float",
    "non_negative_int",
    "number",
    "positive_float",
    "positive_int",
    "score",
    "whole",
]

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What ``add_subparsers`` returns: a command module adds its subcommand(s) to it."""


def positive_int(text: str) -> int:
    return whole(text, 1)


def whole(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {minimum} or more, got {value}")
    return value


def non_negative_int(text: str) -> int:
    return whole(text, 0)


def number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def positive_float(text: str) -> float:
    value = number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {value:g}")
    return value


def non_negative_float(text: str) -> float:
    value = number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value:g}")
    return value


def score(text: str) -> float:
    value = number(text)
    if not 0 <= value <= 10:
        raise argparse.ArgumentTypeError(f"expected a score from 0 to 10, got {value:g}")
    return value


_TTL_KINDS = ("candidate", "judge", "reference")


def cache_ttl(text: str) -> str:
    kind, sep, seconds = text.partition("=")
    if not sep or kind not in _TTL_KINDS:
        raise argparse.ArgumentTypeError(
            f"write KIND=SECONDS with KIND one of {', '.join(_TTL_KINDS)}, e.g. candidate=3600; "
            f"got {text!r}"
        )
    if seconds.strip().lower() not in ("none", "forever"):
        non_negative_float(seconds)
    return text


def add_cache_ttl(parser: argparse.ArgumentParser, what: str) -> None:
    """``--cache-ttl KIND=SECONDS`` of ``cache stats`` and ``cache clear``: expiry judged
    as ``qualspec run --cache-ttl`` reads the cache."""
    parser.add_argument(
        "--cache-ttl",
        action="append",
        default=[],
        type=cache_ttl,
        metavar="KIND=SECONDS",
        help=f"{what} (as `qualspec run --cache-ttl`: candidate, judge, reference; 'none' = "
        "forever; repeatable); default: the run's defaults, candidate and judge answers "
        "never expire, reference answers after 86400 s (24 h), by their age now",
    )


# What a user may type after -o expecting a format: -o always takes a file path.
_FORMAT_NAMES = frozenset({"json", "jsonl", "csv", "text", "txt", "markdown", "md", "html", "yaml"})


def add_output(parser: argparse.ArgumentParser, *flags: str, hint: str, help: str) -> None:
    """An ``-o PATH`` flag: a file path, never a format name.

    ``-o json`` used to write a file named ``json``; the dispatch refuses it in one line
    (:func:`format_as_path`) with ``hint`` (how the command chooses its format). A file of
    that name is still ``-o ./json``.
    """
    dest = flags[0].lstrip("-").replace("-", "_")
    parser.add_argument(*flags, "-o", dest=dest, metavar="PATH", help=help)
    parser.set_defaults(output_flag=(dest, hint))


def format_as_path(ns: argparse.Namespace) -> str | None:
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


def add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="URL",
        help="database URL (default: $QUALSPEC_DATABASE_URL, else sqlite under "
        "$QUALSPEC_HOME or ./.qualspec)",
    )
