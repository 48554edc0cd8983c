"""Labels people give answers (imported from a file), as records."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

__all__ = ["LabelCounts", "LabelRecord"]


@dataclass(slots=True)
class LabelRecord:
    """A person's label of one answer on one criterion (``Store.record_labels``).

    ``score`` (0-10) and ``passed`` are what the person gave (either may be None, not
    both); ``labeller`` who they are ('' when the file does not say). The store fills
    ``imported_by``, ``imported_at``, ``source_name`` and ``source_sha256`` (the file's).
    """

    response_key: str
    criterion: str
    score: float | None = None
    passed: bool | None = None
    labeller: str = ""
    notes: str | None = None
    imported_by: str | None = None
    imported_at: datetime | None = None
    source_name: str | None = None
    source_sha256: str | None = None


class LabelCounts(NamedTuple):
    """What an import of labels did: rows added, changed (another value) and unchanged."""

    added: int
    changed: int
    unchanged: int
