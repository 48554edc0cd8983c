"""Lines the run commands print: never read as rich markup, never broken."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["plural", "say"]


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def say(console: Console, *parts: str | tuple[str, str]) -> None:
    """Print one line of plain strings and ``(text, style)`` pairs, never read as markup."""
    from rich.text import Text

    text = Text()
    for part in parts:
        if isinstance(part, str):
            text.append(part)
        else:
            text.append(part[0], part[1])
    console.print(text, soft_wrap=True)  # one line, never broken (piped output, ids, paths)
