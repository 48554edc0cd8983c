"""A finished run's analysis, computed once and kept in the store (:func:`stored_analysis`).

A finished run never changes, so its temperature and role analysis is computed once and
kept in the store's cache table (kind ``analysis``: ``qualspec cache clear --kind
analysis`` drops them) under a key made of the qualspec version, :data:`ANALYSIS_VERSION`,
the run's id, status and finish time, its metadata, the settings (threshold, aggregation,
similarity method) and a fingerprint of its records (every response's key, error and text
length, every judgment's criterion, score and verdict): a run resumed or re-judged later
gets a new key, so a stale analysis is never read. A run still in progress is never
cached. ``qualspec run`` keeps the analysis it prints at the end of the run, so the web
app's first view of the run reads it instead of computing it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import types
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from qualspec.analysis._run_analysis import (
    RunAnalysis,
    _settings,
    analysis_to_dict,
    analyze_run,
)
from qualspec.analysis._similarity import EMBEDDINGS, similarity_method
from qualspec.store import CacheEntry, RunRecord

if TYPE_CHECKING:
    from qualspec.store import Store

__all__ = ["ANALYSIS_KIND", "ANALYSIS_VERSION", "analysis_from_dict", "stored_analysis"]

_log = logging.getLogger("qualspec.analysis")

# bump when analyze_run gives other numbers for the same records (a stored analysis of an
# older version is then never read)
# 2: stability by the packaged model's static token embeddings (no longer the transformer's)
ANALYSIS_VERSION = 2
ANALYSIS_KIND = "analysis"
# statuses of a run that no longer changes (a resumed run is "running" again)
_SETTLED = frozenset({"finished", "failed", "interrupted", "budget_exceeded"})


def analysis_from_dict(data: Mapping[str, Any]) -> RunAnalysis:
    """The :class:`RunAnalysis` that :func:`analysis_to_dict` turned into ``data``.

    Raises:
        KeyError, TypeError, ValueError: ``data`` is not such a dictionary.
    """
    built: RunAnalysis = _build(RunAnalysis, data)
    return built


@functools.cache
def _hints(kind: type) -> tuple[tuple[str, Any], ...]:
    hints = typing.get_type_hints(kind)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(kind))


def _build(kind: Any, value: Any) -> Any:
    """``value`` (JSON data) as ``kind`` (a dataclass, tuple, dict, union or plain type)."""
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        if not isinstance(value, Mapping):
            raise TypeError(f"{kind.__name__}: expected an object, got {type(value).__name__}")
        return kind(**{name: _build(hint, value[name]) for name, hint in _hints(kind)})
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(args[0], v) for v in value)
        return tuple(_build(a, v) for a, v in zip(args, value, strict=True))
    if origin is dict:
        return {k: _build(args[1], v) for k, v in value.items()}
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        return _build(next(a for a in args if a is not type(None)), value)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _key(record: RunRecord, threshold: float, aggregation: str, method: str) -> str:
    from qualspec.version import __version__

    s = record.summary
    head = [ANALYSIS_KIND, ANALYSIS_VERSION, __version__, s.id, s.status, str(s.finished_at)]
    head += [threshold, aggregation, method, s.metadata]
    digest = hashlib.sha256(json.dumps(head, sort_keys=True, default=str).encode())
    digest.update(
        "\x1e".join(
            f"{r.key}\x1f{r.kind}\x1f{r.error is None}\x1f{len(r.text or '')}"
            for r in record.responses
        ).encode()
    )
    digest.update(
        "\x1e".join(
            f"{j.response_key}\x1f{j.evaluator}\x1f{j.criterion}\x1f{j.score!r}\x1f{j.passed}"
            for j in record.judgments
        ).encode()
    )
    return f"{ANALYSIS_KIND}:{digest.hexdigest()}"


def stored_analysis(
    store: Store,
    record: RunRecord,
    *,
    threshold: float | None = None,
    aggregation: str | None = None,
    similarity: str | None = None,
) -> RunAnalysis:
    """:func:`analyze_run` of ``record``, read from ``store`` when this finished run's
    analysis is kept there, else computed (and kept, when the run is finished). A store
    that cannot be read or written only costs the computation.

    Args:
        store: The store the run is in.
        record: The run as ``store.load_run`` gives it.
        threshold, aggregation, similarity: As for :func:`analyze_run`.

    Example:
        >>> analysis = stored_analysis(store, store.load_run(run_id))  # computed once
    """
    threshold_used, aggregation_used = _settings(record, threshold, aggregation)
    method = similarity or similarity_method()
    summary = record.summary

    def compute() -> RunAnalysis:
        vectors = _KeptEmbeddings(store, record) if method == EMBEDDINGS else None
        analysis = analyze_run(
            record,
            threshold=threshold,
            aggregation=aggregation,
            similarity=similarity,
            embeddings=vectors,
        )
        if vectors is not None:
            vectors.keep()
        return analysis

    if summary.status not in _SETTLED or summary.finished_at is None:
        return compute()
    key = _key(record, threshold_used, aggregation_used, method)
    try:
        found = store.cache_get_many([key]).get(key)
        if found is not None and isinstance(found.structured, Mapping):
            return analysis_from_dict(found.structured)
    except Exception as exc:  # a bad entry or an unreadable store: computed again
        _log.warning("stored analysis of run %s unusable (%s): computed again", summary.id, exc)
    analysis = compute()
    entry = CacheEntry(
        key=key,
        kind=ANALYSIS_KIND,
        provider="qualspec",
        model=f"analysis-v{ANALYSIS_VERSION}",
        structured=analysis_to_dict(analysis),
    )
    try:
        store.cache_put_many([entry])
    except Exception as exc:  # a read-only store: the analysis is still right
        _log.warning("could not keep the analysis of run %s (%s)", summary.id, exc)
    return analysis


class _KeptEmbeddings(dict[str, Any]):
    """Answer text -> embedding, read from the store's cache (kind ``embedding``, by the
    vectors' name and the text's sha256: see :mod:`qualspec.analysis._kept_vectors`) for
    every text of ``record`` when a text is first looked up (a run with nothing to compare
    reads nothing); :meth:`keep` stores the ones embedded since. A run whose texts were all
    embedded before (during the run, by the embedding sink) embeds nothing."""

    def __init__(self, store: Store, record: RunRecord) -> None:
        super().__init__()
        self.store = store
        self.record = record
        self._read: set[str] | None = None

    def _load(self) -> set[str]:
        if self._read is not None:
            return self._read
        texts = dict.fromkeys(
            r.text
            for r in self.record.responses
            if r.kind == "candidate" and r.error is None and r.text is not None
        )
        # loaded only when the analysis compares answers by their embeddings
        from qualspec.analysis._kept_vectors import embedding_key, read_vectors

        found = read_vectors(self.store, {embedding_key(t): t for t in texts})
        self.update(found)
        self._read = set(found)
        return self._read

    def __contains__(self, text: object) -> bool:
        self._load()
        return super().__contains__(text)

    def __getitem__(self, text: str) -> Any:
        self._load()
        return super().__getitem__(text)

    def keep(self) -> None:
        """Store the texts embedded since they were read."""
        if self._read is None:  # nothing was looked up: nothing embedded
            return
        from qualspec.analysis._kept_vectors import keep_vectors

        read = self._read
        keep_vectors(self.store, ((t, v) for t, v in self.items() if t not in read))
