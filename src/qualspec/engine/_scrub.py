"""Secrets out of everything qualspec records or prints (:class:`Scrubber`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from qualspec.providers import ChatResponse

__all__ = ["Scrubber"]


class Scrubber:
    """Replaces every configured secret value by ``***`` in what qualspec records or prints.

    The engine learns the secrets of the providers it calls (their optional
    ``secret_values``: API keys, credentials in a base URL) and scrubs answers (text and
    structured) and error texts before anything is recorded, cached, logged or printed.
    Values shorter than :attr:`MIN_LENGTH` are ignored: replacing them would mangle text.
    """

    MIN_LENGTH = 4
    MASK = "***"

    def __init__(self) -> None:
        self._known: frozenset[str] = frozenset()
        self._values: tuple[str, ...] = ()
        self._seen: set[str] = set()  # every value given to ``add`` (short ones too)

    def __bool__(self) -> bool:
        return bool(self._values)

    def add(self, values: Iterable[str]) -> None:
        """Learn secret values (their URL-encoded and decoded forms too)."""
        # called before every call: values already seen cost one set lookup each
        fresh = [v for v in values if isinstance(v, str) and v not in self._seen]
        if not fresh:
            return
        self._seen.update(fresh)
        from urllib.parse import quote, unquote

        new: set[str] = set()
        for value in fresh:
            if value in self._known:
                continue
            new.update({value, quote(value, safe=""), unquote(value)})
        new = {v for v in new if len(v) >= self.MIN_LENGTH} - self._known
        if not new:
            return
        self._known = self._known | new
        # the longest first, so a value that contains another is masked whole
        self._values = tuple(sorted(self._known, key=len, reverse=True))

    def text(self, text: str) -> str:
        """``text`` with every known secret replaced by ``***``."""
        for value in self._values:
            if value in text:
                text = text.replace(value, self.MASK)
        return text

    def value(self, value: Any) -> Any:
        """Strings inside JSON-like data (dicts, lists, tuples) scrubbed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.value(v) for v in value)
        return value

    def response(self, response: ChatResponse) -> ChatResponse:
        """A response with its text and structured answer scrubbed."""
        if not self._values:
            return response
        text = self.text(response.text) if isinstance(response.text, str) else response.text
        structured = self.value(response.structured)
        if text == response.text and structured == response.structured:
            return response
        return dataclasses.replace(response, text=text, structured=structured)
