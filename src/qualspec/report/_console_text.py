"""The console report's building blocks: styled lines printed as one block, and the numbers
and words they show."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rich.console import Console
    from rich.text import Text

    from qualspec.analysis import (
        CellKey,
        CellScore,
        TemperaturePoint,
    )


_Entries = list[tuple["CellKey", "CellScore"]]
_Merged = tuple[float | None, bool | None, int, int, int, int]
_Points = dict[tuple[str, str | None, str | None, str, float | None], "TemperaturePoint"]
_MAX_ERROR_CHARS = 300


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _fmt_score(score: float | None) -> str:
    if score is None:
        return "  -  "
    return f"{score:4.1f}/10" if score % 1 else f"{score:2.0f}/10"


def append_parts(text: Text, parts: Iterable[str | tuple[str, str]]) -> None:
    """Append plain strings and ``(text, style)`` pairs to ``text``."""
    for part in parts:
        if isinstance(part, str):
            text.append(part)
        else:
            text.append(part[0], part[1])


class _Block:
    """Lines of styled text, printed together."""

    def __init__(self, console: Console) -> None:
        from rich.text import Text

        self._console = console
        self._text_type = Text
        self._text: Text | None = None

    def line(self, *parts: str | tuple[str, str]) -> None:
        """Add one line: plain strings and ``(text, style)`` pairs."""
        text = self._text
        if text is None:
            text = self._text = self._text_type()
        else:
            text.append("\n")
        append_parts(text, parts)

    def flush(self) -> None:
        """Print the lines gathered so far.

        Where no colour or style is written (a file, a pipe: no colour system), the lines
        that fit the console's width are written as they are, and only a longer line is
        laid out (wrapped) by rich: rich's layout of the whole styled text (each line
        measured and wrapped, then cut into styled segments) gives the same characters, at
        30-60 ms for the 600 lines of a 200-row report.
        """
        text, self._text = self._text, None
        if text is None:
            return
        console = self._console
        if console.color_system is not None or "\t" in text.plain:
            console.print(text)
            return
        width, fitting = console.width, []
        for line in text.plain.split("\n"):
            if _cells(line) <= width:
                fitting.append(line)
                continue
            if fitting:
                console.out("\n".join(fitting), highlight=False)
                fitting = []
            console.print(self._text_type(line))
        if fitting:
            console.out("\n".join(fitting), highlight=False)


def _cells(line: str) -> int:
    """The width of ``line`` on a console."""
    if line.isascii():
        return len(line)
    from rich.cells import cell_len

    return cell_len(line)
