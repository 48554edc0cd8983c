"""What a run already holds, looked up for a batch of keys at a time (resume at scale:
never one set of every key of the run), read a page at a time, or counted."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import func, select

from qualspec.store._db import Database
from qualspec.store._records import JudgmentRecord, ResponseRecord
from qualspec.store._results import judgment_from_row, response_from_row
from qualspec.store._schema import judgments, responses
from qualspec.store._shared import pages_by_key

__all__ = [
    "LOOKUP_BATCH",
    "done_evaluations",
    "done_responses",
    "group_judgments",
    "judgments_of",
    "present_keys",
    "response_pages",
    "run_counts",
]

LOOKUP_BATCH = 500
"""Keys per query (below every database's limit on bound parameters)."""


def done_responses(db: Database, run_id: str, keys: Iterable[str]) -> dict[str, ResponseRecord]:
    """The run's current answered responses (no error) among ``keys``, by key."""
    out: dict[str, ResponseRecord] = {}
    wanted = list(dict.fromkeys(keys))
    with db.read() as conn:
        for start in range(0, len(wanted), LOOKUP_BATCH):
            chunk = wanted[start : start + LOOKUP_BATCH]
            for row in conn.execute(done_responses_query(run_id, chunk)).mappings():
                record = response_from_row(row)
                out[record.key] = record
    return out


def done_evaluations(
    db: Database, run_id: str, subject_keys: Iterable[str]
) -> set[tuple[str, str, str]]:
    """``(evaluator, subject key, aspect)`` of the run's current evaluation records that
    are not errors, among the subjects ``subject_keys``."""
    out: set[tuple[str, str, str]] = set()
    wanted = list(dict.fromkeys(subject_keys))
    with db.read() as conn:
        for start in range(0, len(wanted), LOOKUP_BATCH):
            query = done_evaluations_query(run_id, wanted[start : start + LOOKUP_BATCH])
            out.update((str(a), str(b), str(c)) for a, b, c in conn.execute(query))
    return out


def response_pages(
    db: Database, run_id: str, size: int = LOOKUP_BATCH
) -> Iterator[list[ResponseRecord]]:
    """The run's current responses a page at a time, by key (a run of any size is read
    without holding it whole)."""

    def read_page(after: str) -> list[ResponseRecord]:
        query = response_page_query(run_id, after, size)
        with db.read() as conn:
            return [response_from_row(row) for row in conn.execute(query).mappings()]

    return pages_by_key(read_page)


def judgments_of(db: Database, run_id: str, subject_keys: Iterable[str]) -> list[JudgmentRecord]:
    """The run's current evaluation records of the subjects ``subject_keys``."""
    wanted = list(dict.fromkeys(subject_keys))
    out: list[JudgmentRecord] = []
    with db.read() as conn:
        for start in range(0, len(wanted), LOOKUP_BATCH):
            chunk = wanted[start : start + LOOKUP_BATCH]
            rows = conn.execute(judgments_of_query(run_id, chunk)).mappings()
            out.extend(judgment_from_row(row) for row in rows)
    return out


def run_counts(db: Database, run_id: str) -> dict[str, int]:
    """How many current responses (and of them errors, cached, candidates, failed
    candidates) and evaluation records (errors, scored, passed) a run holds."""
    answers, evaluations = run_counts_queries(run_id)
    with db.read() as conn:
        a = conn.execute(answers).one()
        e = conn.execute(evaluations).one()
    names = ("responses", "errors", "cached_responses", "candidates", "failed_candidates")
    out = dict(zip(names, (int(v) for v in a), strict=True))
    names = ("judgments", "judgment_errors", "scored", "passed", "failed")
    out.update(zip(names, (int(v) for v in e), strict=True))
    return out


def present_keys(db: Database, run_id: str, keys: Iterable[str]) -> set[str]:
    """The keys among ``keys`` of the run's current responses (errors included)."""
    wanted = list(dict.fromkeys(keys))
    out: set[str] = set()
    with db.read() as conn:
        for start in range(0, len(wanted), LOOKUP_BATCH):
            chunk = wanted[start : start + LOOKUP_BATCH]
            out.update(str(k) for k in conn.execute(present_keys_query(run_id, chunk)).scalars())
    return out


def group_judgments(
    db: Database, run_id: str
) -> list[tuple[str, str, str, str | None, float | None]]:
    """``(evaluator, subject key, aspect, judge model, threshold)`` of the run's current
    evaluation records of groups (a subject of several answers)."""
    with db.read() as conn:
        rows = conn.execute(group_judgments_query(run_id))
        return [(str(a), str(b), str(c), d, e) for a, b, c, d, e in rows]


# The queries, given the run id and keys as values or bind parameters (the SQLite run
# path compiles them: see _lite_gen).


def response_page_query(run_id: Any, after: Any, size: Any) -> Any:
    """A page of the run's current responses: the first ``size`` by key after ``after``."""
    r = responses.c
    return (
        select(responses)
        .where(r.run_id == run_id, ~r.superseded, r.key > after)
        .order_by(r.key)
        .limit(size)
    )


def done_responses_query(run_id: Any, keys: Any) -> Any:
    """The run's current answered responses (no error) among ``keys``."""
    r = responses.c
    return select(responses).where(
        r.run_id == run_id, ~r.superseded, r.error.is_(None), r.key.in_(keys)
    )


def done_evaluations_query(run_id: Any, keys: Any) -> Any:
    """(evaluator, subject key, aspect) of the run's current records that are not errors,
    among the subjects ``keys``."""
    j = judgments.c
    return select(j.evaluator, j.response_key, j.criterion).where(
        j.run_id == run_id, j.error.is_(None), ~j.superseded, j.response_key.in_(keys)
    )


def judgments_of_query(run_id: Any, keys: Any) -> Any:
    """The run's current evaluation records of the subjects ``keys``."""
    j = judgments.c
    return select(judgments).where(j.run_id == run_id, ~j.superseded, j.response_key.in_(keys))


def present_keys_query(run_id: Any, keys: Any) -> Any:
    """The keys among ``keys`` of the run's current responses."""
    r = responses.c
    return select(r.key).where(r.run_id == run_id, ~r.superseded, r.key.in_(keys))


def group_judgments_query(run_id: Any) -> Any:
    """(evaluator, subject key, aspect, judge model, threshold) of the run's current
    records of groups."""
    j = judgments.c
    return select(j.evaluator, j.response_key, j.criterion, j.judge_model, j.threshold).where(
        j.run_id == run_id, ~j.superseded, j.subject.is_not(None)
    )


def run_counts_queries(run_id: Any) -> tuple[Any, Any]:
    """The counts of ``run_counts``: of the run's current responses, of its records."""
    r, j = responses.c, judgments.c
    candidate = r.kind == "candidate"
    answers = select(
        func.count(),
        func.count().filter(r.error.is_not(None)),
        func.count().filter(r.cached),
        func.count().filter(candidate),
        func.count().filter(candidate, r.error.is_not(None)),
    ).where(r.run_id == run_id, ~r.superseded)
    evaluations = select(
        func.count(),
        func.count().filter(j.error.is_not(None)),
        func.count().filter(j.score.is_not(None)),
        func.count().filter(j.passed.is_(True)),
        func.count().filter(j.passed.is_(False)),
    ).where(j.run_id == run_id, ~j.superseded)
    return answers, evaluations
