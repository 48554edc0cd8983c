"""People's labels of a page's answers, to show beside the judges' scores."""

from __future__ import annotations

from collections.abc import Sequence

from qualspec.store import LabelRecord, Store

__all__ = ["people_labels"]


def people_labels(
    store: Store, run_id: str, keys: Sequence[str]
) -> dict[str, dict[str, list[LabelRecord]]]:
    """Response key -> criterion -> its labels, for the answers ``keys`` of a run (read
    for one page's answers, never the whole run)."""
    out: dict[str, dict[str, list[LabelRecord]]] = {}
    if not keys:
        return out
    for label in store.labels(run_id, keys):
        out.setdefault(label.response_key, {}).setdefault(label.criterion, []).append(label)
    return out
