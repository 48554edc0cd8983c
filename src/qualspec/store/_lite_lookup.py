"""What a resumed run looks up in its store, on the stdlib driver (``LiteStore``'s share
of ``_lookup`` and ``supersede``): a batch of keys at a time, as the SQLAlchemy path."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from qualspec.store._lite_db import LiteDatabase
from qualspec.store._lite_ops import execute, fetch, json_rows
from qualspec.store._records import (
    JudgmentRecord,
    ResponseRecord,
    judgment_from_row,
    response_from_row,
)
from qualspec.store._shared import criterion_hash, pages_by_key

__all__ = ["LiteLookups"]

_BATCH = 500  # keys per query (below every database's limit on bound parameters)
_COUNTS = (
    ("responses", "errors", "cached_responses", "candidates", "failed_candidates"),
    ("judgments", "judgment_errors", "scored", "passed", "failed"),
)


_KEY = operator.itemgetter("key")


def _batches(keys: Iterable[str]) -> Iterable[list[str]]:
    wanted = list(dict.fromkeys(keys))
    return (wanted[i : i + _BATCH] for i in range(0, len(wanted), _BATCH))


class LiteLookups:
    """The lookups of a resumed run, for a Store whose ``_lite`` is a LiteDatabase."""

    _lite: LiteDatabase

    def done_responses(self, run_id: str, keys: Iterable[str]) -> dict[str, ResponseRecord]:
        out: dict[str, ResponseRecord] = {}
        with self._lite.read() as conn:
            for chunk in _batches(keys):
                for row in fetch(conn, "done_responses", "responses", run_id=run_id, keys=chunk):
                    record = response_from_row(row)
                    out[record.key] = record
        return out

    def response_pages(self, run_id: str, size: int = _BATCH) -> Iterator[list[ResponseRecord]]:
        def read_page(after: str) -> list[ResponseRecord]:
            with self._lite.read() as conn:
                rows = fetch(
                    conn, "response_page", "responses", run_id=run_id, after=after, size=size
                )
            return [response_from_row(row) for row in rows]

        return pages_by_key(read_page)

    def response_json_pages(
        self, run_id: str, names: Sequence[str], size: int = _BATCH
    ) -> Iterator[list[dict[str, Any]]]:
        make = json_rows("responses", names)

        def read_page(after: str) -> list[dict[str, Any]]:
            with self._lite.read() as conn:
                rows = execute(conn, "response_page", run_id=run_id, after=after, size=size)
                return [make(row) for row in rows.fetchall()]

        return pages_by_key(read_page, _KEY)

    def done_evaluations(
        self, run_id: str, subject_keys: Iterable[str]
    ) -> set[tuple[str, str, str]]:
        out: set[tuple[str, str, str]] = set()
        with self._lite.read() as conn:
            for chunk in _batches(subject_keys):
                rows = execute(conn, "done_evaluations", run_id=run_id, keys=chunk)
                out.update((str(a), str(b), str(c)) for a, b, c in rows)
        return out

    def judgments_of(self, run_id: str, subject_keys: Iterable[str]) -> list[JudgmentRecord]:
        out: list[JudgmentRecord] = []
        with self._lite.read() as conn:
            for chunk in _batches(subject_keys):
                rows = fetch(conn, "judgments_of", "judgments", run_id=run_id, keys=chunk)
                out.extend(judgment_from_row(row) for row in rows)
        return out

    def present_keys(self, run_id: str, keys: Iterable[str]) -> set[str]:
        out: set[str] = set()
        with self._lite.read() as conn:
            for chunk in _batches(keys):
                rows = execute(conn, "present_keys", run_id=run_id, keys=chunk)
                out.update(str(k) for (k,) in rows)
        return out

    def group_judgments(self, run_id: str) -> list[tuple[str, str, str, str | None, float | None]]:
        with self._lite.read() as conn:
            rows = execute(conn, "group_judgments", run_id=run_id).fetchall()
        return [(str(a), str(b), str(c), d, e) for a, b, c, d, e in rows]

    def run_counts(self, run_id: str) -> dict[str, int]:
        with self._lite.read() as conn:
            a = execute(conn, "run_counts_answers", run_id=run_id).fetchone()
            e = execute(conn, "run_counts_evaluations", run_id=run_id).fetchone()
        out = dict(zip(_COUNTS[0], (int(v) for v in a), strict=True))
        out.update(zip(_COUNTS[1], (int(v) for v in e), strict=True))
        return out

    def supersede(
        self,
        run_id: str,
        response_keys: Iterable[str] = (),
        evaluation_keys: Iterable[tuple[str, str, str]] = (),
    ) -> None:
        resp = [(run_id, key) for key in sorted(set(response_keys))]
        evals = [(run_id, e, k, criterion_hash(c)) for e, k, c in sorted(set(evaluation_keys))]
        if not resp and not evals:
            return
        with self._lite.write() as conn:
            if resp:
                conn.executemany(_sql("supersede_responses", "run_id", "b_key"), resp)
            if evals:
                names = ("run_id", "b_evaluator", "b_response_key", "b_hash")
                conn.executemany(_sql("supersede_evaluations", *names), evals)


def _sql(name: str, *params: str) -> str:
    """The SQL of statement ``name``, checked to take ``params`` in that order."""
    from qualspec.store._lite_sql import SQL

    sql, names, _ = SQL[name]
    if names != params:
        raise ValueError(f"{name} takes {names}, not {params}")
    return sql
