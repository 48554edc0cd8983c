"""Ids given by a prefix (runs, reference answers): the one that matches, or why not."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["only_match"]


def only_match(
    prefix: str,
    found: Sequence[str],
    *,
    error: type[Exception],
    noun: str,
    kind: str,
    plural: str,
    hint: str,
) -> str:
    """The one id of ``found`` (the ids that start with ``prefix``, sorted; a few are
    enough to show), else ``error`` saying that none or several match.

    Example: ``only_match("ab", ["abc"], error=LookupError, noun="run", kind="run",
    plural="runs", hint="see `qualspec runs list`")`` -> ``"abc"``.
    """
    if not found or not prefix:
        raise error(f"no {noun} with id '{prefix}': {hint}")
    if len(found) > 1:
        shown = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
        raise error(
            f"{kind} id prefix '{prefix}' matches several {plural} ({shown}): give more "
            f"characters; {hint}"
        )
    return found[0]
