"""Answer embeddings kept in the store's cache table, by the text's SHA-256.

An entry is of kind ``embedding`` (``qualspec cache clear --kind embedding`` drops them),
keyed ``embedding:<vectors' name>:<sha256 of the text>``, the vector as base64 of
little-endian float32 in ``text``. The text itself is never stored. Vectors of another
model or method have another name, so they are never mixed.
"""

from __future__ import annotations

import base64
import hashlib
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from qualspec.analysis._similarity import EMBEDDING_MODEL
from qualspec.store import CacheEntry

if TYPE_CHECKING:
    from qualspec.store import Store

__all__ = ["EMBEDDING_KIND", "embedding_key", "keep_vectors", "read_vectors", "vector_entries"]

_log = logging.getLogger("qualspec.analysis")

EMBEDDING_KIND = "embedding"


def embedding_key(text: str) -> str:
    """The cache key of ``text``'s embedding."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{EMBEDDING_KIND}:{EMBEDDING_MODEL}:{digest}"


def read_vectors(store: Store, keys: dict[str, str]) -> dict[str, Any]:
    """The kept vectors of ``keys`` (cache key -> text), by text: the texts not kept (or
    all, when the store cannot be read) are absent."""
    if not keys:
        return {}
    try:
        found = store.cache_get_many(list(keys))
    except Exception as exc:  # an unreadable store: every text embedded again
        _log.warning("kept embeddings unreadable (%s): embedded again", exc)
        return {}
    if not found:
        return {}
    import numpy as np

    vectors: dict[str, Any] = {}
    for key, entry in found.items():
        if entry.text and key in keys:
            vectors[keys[key]] = np.frombuffer(base64.b64decode(entry.text), dtype="<f4")
    return vectors


def vector_entries(vectors: Iterable[tuple[str, Any]]) -> list[CacheEntry]:
    """The cache entries that keep ``(text, vector)`` pairs."""
    import numpy as np

    return [
        CacheEntry(
            key=embedding_key(text),
            kind=EMBEDDING_KIND,
            provider="qualspec",
            model=EMBEDDING_MODEL,
            text=base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode(),
        )
        for text, vector in vectors
    ]


def keep_vectors(store: Store, vectors: Iterable[tuple[str, Any]]) -> int:
    """Keep ``(text, vector)`` pairs in ``store`` (one transaction); how many. A store
    that cannot be written only costs embedding them again next time."""
    entries = vector_entries(vectors)
    if not entries:
        return 0
    try:
        store.cache_put_many(entries)
    except Exception as exc:  # a read-only store: embedded again next time
        _log.warning("could not keep %d embeddings (%s)", len(entries), exc)
        return 0
    return len(entries)
