"""What the SQLAlchemy path and the stdlib-``sqlite3`` path of the store share: the
values a new row is made of, the upsert rule within a batch, the order of records and
the freshness of cache entries (pure Python, no driver)."""

from __future__ import annotations

import hashlib
import json
import operator
import secrets
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import fields
from datetime import datetime, timedelta
from typing import Any, TypeVar

from qualspec.store._clock import now_utc
from qualspec.store._liveness import abandoned_reason
from qualspec.store._records import (
    JUDGMENT_FIELDS,
    RESPONSE_FIELDS,
    CacheEntry,
    JudgmentRecord,
    ResponseRecord,
    RunSummary,
)
from qualspec.store._redact import redact

UNFINISHED = ("running", "interrupted", "budget_exceeded", "failed")
MAX_ID_LENGTH = 1000  # characters: longer ids and prefixes are refused before a query
JSON_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""How a JSON column's value is stored: compact, keys sorted (one encoder, not one per row)."""
CACHE_FIELDS = tuple(f.name for f in fields(CacheEntry) if f.name != "error")
_cache_values = operator.attrgetter(*CACHE_FIELDS)
_CACHE_CREATED = CACHE_FIELDS.index("created_at")
RUN_LIST_HINT = "see `qualspec runs list`"

COPY_FIELDS = (
    "key",
    "candidate",
    "role",
    "scenario",
    "input_id",
    "temperature",
    "run_index",
    "provider",
    "model",
    "kind",
    "input_values",
    "call_key",
    "prompt_versions",
    "created_at",
)
"""What a cell copied from the cache is given as (``Store.copy_cached``), in this order:
its work item's fields (``key`` ... ``input_values``), its cache key (``call_key``), its
prompt versions (a dict, the same object for cells of the same prompts) and its creation
time."""

COPY_FROM_CACHE = (
    "effective_temperature",
    "text",
    "finish_reason",
    "input_tokens",
    "output_tokens",
)
"""The response columns a cached copy takes from the cache entry."""
COPY_CONSTANTS = {
    "latency_s": "0.0",
    "cost_usd": "0.0",
    "attempts": "0",
    "error": "NULL",
    "cached": "1",
    "superseded": "0",
    "queue_s": "NULL",
    "served_by": "NULL",
}
"""The SQL value of each other response column of a cached copy: what
``ResponseRecord.from_cache_entry`` sets (nothing paid, no attempt, no queue time,
``cached``), a record's defaults for the rest."""


def new_run_id(now: datetime | None = None) -> str:
    """``YYYYMMDD-HHMMSS-xxxxxx``: a UTC timestamp (sortable) and random hex."""
    return f"{(now or now_utc()):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


CREATE_COLUMNS = (
    "id",
    "suite_name",
    "suite_hash",
    "status",
    "started_at",
    "finished_at",
    "metadata",
)
"""The columns a new run's row is inserted with (the others start NULL)."""


def new_run_row(suite_name: str, suite_hash: str, metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The values of a new run's row (``CREATE_COLUMNS``): status ``running``, a new id."""
    now = now_utc()
    return {
        "id": new_run_id(now),
        "suite_name": suite_name,
        "suite_hash": suite_hash,
        "status": "running",
        "started_at": now,
        "finished_at": None,
        "metadata": redact(dict(metadata)),
    }


R = TypeVar("R", ResponseRecord, JudgmentRecord)
# the record's fields stored in columns of the same name (its row's values are stored
# apart, once per row: see _input_rows)
# the columns written, in order: the run id (and a judgment's criterion hash), then the
# record's fields (each a column of the same name)
RESPONSE_COLUMNS = ("run_id", *RESPONSE_FIELDS)
JUDGMENT_COLUMNS = ("run_id", "criterion_hash", *JUDGMENT_FIELDS)
response_values = operator.attrgetter(*RESPONSE_FIELDS)
judgment_values = operator.attrgetter(*JUDGMENT_FIELDS)
R_VERSIONS = RESPONSE_COLUMNS.index("prompt_versions")
R_CREATED = RESPONSE_COLUMNS.index("created_at")
R_INPUT = RESPONSE_COLUMNS.index("input_hash")
J_CREATED = JUDGMENT_COLUMNS.index("created_at")
J_SUBJECT = JUDGMENT_COLUMNS.index("subject")
J_SCORES = JUDGMENT_COLUMNS.index("scores")
J_DETAILS = JUDGMENT_COLUMNS.index("details")
RESPONSE_CONFLICT = ("run_id", "key")
JUDGMENT_CONFLICT = ("run_id", "evaluator", "response_key", "criterion_hash")
CRITERIA = "criteria"  # the criteria judge's evaluator name


def criterion_hash(criterion: str) -> str:
    """SHA-256 of the criterion's UTF-8 bytes (hex): its stand-in in the unique key."""
    return hashlib.sha256(criterion.encode("utf-8")).hexdigest()


def response_key(rec: ResponseRecord) -> Hashable:
    return rec.key


def judgment_key(rec: JudgmentRecord) -> Hashable:
    return (rec.evaluator, rec.response_key, rec.criterion)


def dedupe(records: Sequence[R], key: Callable[[R], Hashable]) -> list[R]:
    """Apply the upsert rule within one batch (a batch may not touch a row twice)."""
    chosen: dict[Hashable, R] = {}
    for rec in records:
        k = key(rec)
        prev = chosen.get(k)
        if prev is None or prev.error is not None:
            chosen[k] = rec
    return list(chosen.values())


def response_rows(
    run_id: str,
    records: Sequence[ResponseRecord],
    row_entry: Callable[[Mapping[str, Any]], tuple[str, str]],
) -> tuple[list[list[Any]], dict[str, str]]:
    """The rows (``RESPONSE_COLUMNS``) to upsert for a batch of responses, after the upsert
    rule within the batch, and the JSON of the input rows they name, by hash (from
    ``row_entry``: ``_input_rows.RowMemo.entry``). A record's
    ``input_hash`` is set here, from its ``input_values`` (None without them); a row
    without a creation time is given the batch's."""
    now = now_utc()
    inputs: dict[str, str] = {}  # hash -> JSON of the batch's input rows
    rows = []
    for rec in dedupe(records, response_key):
        values = [run_id, *response_values(rec)]
        versions = values[R_VERSIONS]
        if type(versions) is not dict:  # a mapping of another type: stored as a plain dict
            values[R_VERSIONS] = dict(versions)
        found: str | None = None
        if rec.input_values is not None:
            found, text = row_entry(rec.input_values)
            inputs[found] = text
        values[R_INPUT] = rec.input_hash = found
        if values[R_CREATED] is None:
            values[R_CREATED] = now
        rows.append(values)
    return rows, inputs


def judgment_rows(run_id: str, records: Sequence[JudgmentRecord]) -> list[list[Any]]:
    """The rows (``JUDGMENT_COLUMNS``) to upsert for a batch of evaluation records, after
    the upsert rule within the batch; one without a creation time is given the batch's."""
    now = now_utc()
    rows = []
    for rec in dedupe(records, judgment_key):
        values = [run_id, criterion_hash(rec.criterion), *judgment_values(rec)]
        # stored as plain JSON values (a tuple or another mapping type becomes a list/dict)
        for i, plain in ((J_SUBJECT, list), (J_SCORES, dict), (J_DETAILS, dict)):
            if values[i] is not None and type(values[i]) is not plain:
                values[i] = plain(values[i])
        if values[J_CREATED] is None:
            values[J_CREATED] = now
        rows.append(values)
    return rows


def cache_rows(entries: Sequence[CacheEntry]) -> list[list[Any]]:
    """The rows (``CACHE_FIELDS``) to upsert for cache entries: errors are never cached,
    the last entry of a key wins, one without a creation time is given now."""
    now = now_utc()
    rows: dict[str, list[Any]] = {}
    for entry in entries:
        if is_error(entry):
            continue
        row = list(_cache_values(entry))
        if row[_CACHE_CREATED] is None:
            row[_CACHE_CREATED] = now
        rows[entry.key] = row
    return list(rows.values())


def judgment_order(ordered: Sequence[ResponseRecord]) -> Callable[[JudgmentRecord], Any]:
    """The sort key of evaluation records in the order of their subjects' responses
    (``ordered``; see ``load_judgments``)."""
    position = {rec.key: i for i, rec in enumerate(ordered)}
    return lambda j: (
        position.get(j.response_key, len(position)),
        j.response_key,
        j.evaluator != CRITERIA,
        j.evaluator,
        j.criterion,
        j.superseded,
    )


def response_order(rec: ResponseRecord) -> tuple[Any, ...]:
    # sorted in Python so that SQLite and PostgreSQL (collations, NULL order) agree
    return (
        rec.scenario,
        rec.input_id is not None,
        rec.input_id or "",
        rec.role is not None,
        rec.role or "",
        rec.candidate,
        rec.temperature is not None,  # None (the provider's default) first
        rec.temperature or 0.0,
        rec.run_index,
        rec.key,
        rec.superseded,
    )


def fresh(row: Any, ttl: Mapping[str, float | None], moment: datetime) -> bool:
    """Whether a cache row may be read at ``moment`` (see ``cache_get_many``)."""
    kind = row["kind"]
    if kind in ttl:
        seconds = ttl[kind]
        created = row["created_at"]
        if seconds is None or created is None:
            return True
        try:
            return bool(moment - created < timedelta(seconds=seconds))
        except OverflowError:  # a lifetime longer than the calendar: never expires
            return True
    expires = row["expires_at"]
    return expires is None or bool(expires > moment)


def is_error(entry: CacheEntry) -> bool:
    return entry.error is not None or (entry.text is None and entry.structured is None)


def summary(row: Any, a: Any, b: Any) -> RunSummary:
    """A run row with its response (``a``) and judgment (``b``) totals."""
    status, metadata = row["status"], dict(row["metadata"] or {})
    if status == "running":
        # its owner is gone without marking it: it failed (and is resumable), whatever
        # the row still says; the reason recorded by the run, if it could, is kept
        gone = abandoned_reason(row["owner_pid"], row["owner_host"], row["heartbeat_at"])
        if gone is not None:
            status = "failed"
            metadata["failure"] = metadata.get("failure") or gone
    # a cost with a call of unknown price is unknown (None), never a partial sum
    candidate_cost = None if a and a.unpriced else (float(a.cost) if a else 0.0)
    judge_cost = None if b and b.unpriced else (float(b.cost) if b else 0.0)
    return RunSummary(
        id=row["id"],
        suite_name=row["suite_name"],
        suite_hash=row["suite_hash"],
        status=status,
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        metadata=metadata,
        n_responses=int(a.n) if a else 0,
        n_judgments=int(b.n) if b else 0,
        cost_usd=(
            None if candidate_cost is None or judge_cost is None else candidate_cost + judge_cost
        ),
        n_errors=(int(a.errors) if a else 0) + (int(b.errors) if b else 0),
        n_unscored=int(b.unscored) if b else 0,
        n_cached=(int(a.cached) if a else 0) + (int(b.cached) if b else 0),
        candidate_cost_usd=candidate_cost,
        judge_cost_usd=judge_cost,
        owner_pid=row["owner_pid"],
        owner_host=row["owner_host"],
        heartbeat_at=row["heartbeat_at"],
    )


def pages_by_key(
    read_page: Callable[[str], list[Any]],
    key_of: Callable[[Any], str] = operator.attrgetter("key"),
) -> Iterator[list[Any]]:
    """Pages of records (or rows) in key order, each ``read_page(after)`` (the next page of
    keys above ``after``; empty: no more), so that a run of any size is read without holding
    it whole (each store reads a page with its own driver). ``key_of``: a page item's key."""
    after = ""
    while page := read_page(after):
        yield page
        after = key_of(page[-1])


def json_fields(names: Sequence[str]) -> Callable[[ResponseRecord], dict[str, Any]]:
    """A function making a response the dict of its fields ``names`` (in that order) with
    JSON values: ``created_at`` as ISO-8601 text (``Store.response_json_pages``)."""
    values = operator.attrgetter(*names)
    timed = "created_at" in names

    def as_json(response: ResponseRecord) -> dict[str, Any]:
        item = dict(zip(names, values(response), strict=True))
        if timed:
            created = response.created_at
            item["created_at"] = created.isoformat() if created is not None else None
        return item

    return as_json


class JsonPages:
    """A store's answers as a results file writes them: ``Store``'s base (its own module is
    at the size limit); ``LiteStore`` overrides ``response_json_pages`` with its rows."""

    def response_pages(self, run_id: str, size: int = 500) -> Iterator[list[ResponseRecord]]:
        """Declared for ``response_json_pages``: every ``Store`` defines it."""
        raise NotImplementedError

    def response_json_pages(
        self, run_id: str, names: Sequence[str], size: int = 500
    ) -> Iterator[list[dict[str, Any]]]:
        """``response_pages`` as dicts of the fields ``names`` (``ResponseRecord``'s, in that
        order) with JSON values, ``created_at`` as ISO-8601 text: what a results file
        writes (a SQLite store makes them from its rows, with no record in between)."""
        as_json = json_fields(names)
        return ([as_json(r) for r in page] for page in self.response_pages(run_id, size))
