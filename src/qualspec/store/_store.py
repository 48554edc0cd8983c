"""The Store: qualspec's results database (SQLite by default, PostgreSQL by URL).

One Store holds one SQLAlchemy engine (on a SQLite file, ``open`` gives the stdlib-sqlite3
Store of ``_lite_store``); every call takes a connection for one transaction, so a Store
may be used from the engine's writer thread and the main thread at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from qualspec.lazy import lazy_modules
from qualspec.store._label_records import LabelCounts, LabelRecord
from qualspec.store._lite_db import lite_path
from qualspec.store._records import (
    CacheEntry,
    JudgmentRecord,
    PromptVersion,
    ResponseRecord,
    RunRecord,
    RunSummary,
)
from qualspec.store._reference_records import ReferenceAnswer, ReferenceReview
from qualspec.store._shared import JsonPages
from qualspec.store._url import resolve_url

if TYPE_CHECKING:
    from qualspec.store import (
        _cache,
        _db,
        _labels,
        _lock,
        _lookup,
        _migrate,
        _parts,
        _prompts,
        _references,
        _results,
        _runs,
    )
else:  # the SQLAlchemy path's modules, loaded on first use (a SQLite run needs none)
    _SA = "_cache _db _labels _lock _lookup _migrate _parts _prompts _references _results _runs"
    globals().update(lazy_modules(__package__, _SA))

__all__ = ["Store"]


class Store(JsonPages):
    """The results database: runs, responses, judgments, prompt versions and the cache.

    Example:
        ```python
        store = Store.open()  # $QUALSPEC_DATABASE_URL or .qualspec/qualspec.db
        run_id = store.create_run("support-bot", suite_hash, {"argv": argv})
        store.record_responses(run_id, batch)
        print(store.get_run(run_id[:10]).n_responses)
        store.close()
        ```
    """

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        """Connect to ``url`` (a SQLAlchemy URL) and upgrade its schema unless ``migrate=False``
        (prefer ``Store.open``, which also resolves the default location)."""
        self._db = _db.Database(url)
        self._prompts = _prompts.PromptRegistry(self._db)
        if migrate:
            _migrate.open_schema(self._db)

    _sqlite_class: ClassVar[type[Store] | None] = None  # what ``open`` gives a SQLite file

    def __init_subclass__(cls, *, sqlite_files: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if sqlite_files:  # the stdlib-sqlite3 Store (_lite_store)
            Store._sqlite_class = cls

    @classmethod
    def open(cls, url: str | None = None) -> Store:
        """Open (creating and migrating as needed) the results database.

        Args:
            url: A database URL; else ``$QUALSPEC_DATABASE_URL``; else
                ``sqlite:///$QUALSPEC_HOME/qualspec.db`` (home defaults to ``./.qualspec``).
                ``postgres://`` and ``postgresql://`` use the psycopg 3 driver.

        Raises:
            StoreError: The database cannot be reached or refused the migration.
            SchemaVersionError: The database was written by a newer qualspec.
            MissingDependencyError: PostgreSQL was asked for without psycopg installed.
        """
        resolved = resolve_url(url)
        lite = Store._sqlite_class if cls is Store and lite_path(resolved) else None
        return (lite or cls)(resolved)

    # ------------------------------------------------------------------ basics

    @property
    def url_for_display(self) -> str:
        """The database URL with any password masked."""
        return self._db.display

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._db.dialect

    @property
    def schema_revision(self) -> str | None:
        """The schema revision the database is at."""
        return _migrate.current_revision(self._db.engine)

    def close(self) -> None:
        """Close every pooled connection; the Store must not be used afterwards."""
        self._db.dispose()

    def reconnect(self) -> None:
        """Drop pooled connections so the next call opens fresh ones (after a DB restart)."""
        self._db.reconnect()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self._db.display!r})"

    # ------------------------------------------------------------------ runs

    def create_run(self, suite_name: str, suite_hash: str, metadata: Mapping[str, Any]) -> str:
        """Create a run (status ``running``) and return its id, e.g. ``20261122-054501-3f9a1c``.

        Secret-looking values in ``metadata`` are replaced by ``***`` (see ``redact``).
        """
        return _runs.create_run(self._db, suite_name, suite_hash, metadata)

    def update_run_metadata(self, run_id: str, patch: Mapping[str, Any]) -> None:
        """Merge ``patch`` into a run's metadata (top-level keys replace; redacted)."""
        _runs.update_run_metadata(self._db, run_id, patch)

    def finish_run(self, run_id: str, status: str) -> None:
        """Record a run's end: ``finished``, ``interrupted``, ``failed`` or ``budget_exceeded``."""
        _runs.finish_run(self._db, run_id, status)

    def get_run(self, run_id: str) -> RunSummary:
        """A run by id or unique id prefix; StoreError when none or several match."""
        return _runs.get_run(self._db, run_id)

    def list_runs(
        self, suite_name: str | None = None, limit: int = 50, *, exclude_suite: str | None = None
    ) -> list[RunSummary]:
        """The newest runs first (of one suite when given, none of ``exclude_suite``), with
        counts and costs."""
        return _runs.list_runs(self._db, suite_name, limit, exclude_suite=exclude_suite)

    def latest_unfinished_run(
        self, suite_name: str, suite_path: str | None = None, suite_hash: str | None = None
    ) -> str | None:
        """The newest running, interrupted, failed or over-budget run of a suite.

        A suite is its name and, when given, its file or content: a run matches when its
        metadata's ``suite_path`` is ``suite_path`` or its suite hash is ``suite_hash``.
        """
        return _runs.latest_unfinished_run(self._db, suite_name, suite_path, suite_hash)

    def delete_run(self, run_id: str) -> None:
        """Delete a run (id or unique prefix) with its responses and judgments, and the
        input rows no other run's responses name."""
        _runs.delete_run(self._db, run_id)

    # ------------------------------------------------------------------ run lock

    def acquire_run(self, run_id: str) -> None:
        """Mark the run as executed by this process.

        Raises:
            RunLockedError: Another live process holds it (same host: its pid exists;
                other host: its heartbeat is younger than 60 s).
        """
        _lock.acquire_run(self._db, run_id)

    def heartbeat(self, run_id: str) -> None:
        """Refresh this process's hold on a run (call every ~20 s during long runs)."""
        _lock.heartbeat(self._db, run_id)

    def release_run(self, run_id: str) -> None:
        """Release this process's hold on a run (no-op when it holds none)."""
        _lock.release_run(self._db, run_id)

    # ------------------------------------------------------------------ results

    def record_responses(self, run_id: str, records: Sequence[ResponseRecord]) -> None:
        """Upsert a batch of responses in one transaction, idempotently by key: a later
        record replaces an earlier error for the same key; a success is kept. A record's
        ``input_values`` (its input row) are stored once per distinct row, by hash, in the
        same transaction (secrets masked: ``redact_values``), its ``input_hash`` set."""
        _results.record_responses(self._db, run_id, records)

    def record_judgments(self, run_id: str, records: Sequence[JudgmentRecord]) -> None:
        """Upsert a batch of evaluation records by (evaluator, response_key, criterion)."""
        _results.record_judgments(self._db, run_id, records)

    def together(self) -> contextlib.AbstractContextManager[None]:
        """Writes made in it on this thread (``record_responses``, ``cache_put_many``, ...)
        share one transaction, committed at its end; an error rolls back all."""
        return self._db.together()

    def response_keys(self, run_id: str, ok_only: bool = True) -> set[str]:
        """Keys of a run's recorded responses (successes only when ``ok_only``)."""
        return _results.response_keys(self._db, run_id, ok_only)

    def judgment_keys(self, run_id: str) -> set[tuple[str, str]]:
        """(response_key, criterion) of a run's final judgments (scored or unscored)."""
        return _results.judgment_keys(self._db, run_id)

    def evaluation_keys(self, run_id: str) -> set[tuple[str, str, str]]:
        """(evaluator, response_key, criterion) of a run's final evaluation records.

        Every evaluator's records (the criteria judge's included) that are not errors:
        what a resumed run need not evaluate again.
        """
        return _results.evaluation_keys(self._db, run_id)

    def done_responses(self, run_id: str, keys: Iterable[str]) -> dict[str, ResponseRecord]:
        """The run's answered responses (not errors) among ``keys``, by key: looked up a
        batch at a time (resume at any size holds only the batch it asks about)."""
        return _lookup.done_responses(self._db, run_id, keys)

    def done_evaluations(
        self, run_id: str, subject_keys: Iterable[str]
    ) -> set[tuple[str, str, str]]:
        """``(evaluator, subject key, aspect)`` of the run's evaluation records that are
        not errors, among the subjects ``subject_keys`` (a batch at a time)."""
        return _lookup.done_evaluations(self._db, run_id, subject_keys)

    def response_pages(self, run_id: str, size: int = 500) -> Iterator[list[ResponseRecord]]:
        """A run's current responses ``size`` at a time, by key (never the whole run)."""
        return _lookup.response_pages(self._db, run_id, size)

    def judgments_of(self, run_id: str, subject_keys: Iterable[str]) -> list[JudgmentRecord]:
        """A run's current evaluation records of the subjects ``subject_keys``."""
        return _lookup.judgments_of(self._db, run_id, subject_keys)

    def present_keys(self, run_id: str, keys: Iterable[str]) -> set[str]:
        """The keys among ``keys`` of the run's current responses (errors included)."""
        return _lookup.present_keys(self._db, run_id, keys)

    def group_judgments(self, run_id: str) -> list[tuple[str, str, str, str | None, float | None]]:
        """``(evaluator, subject key, aspect, judge model, threshold)`` of the run's
        current evaluation records of groups."""
        return _lookup.group_judgments(self._db, run_id)

    def run_counts(self, run_id: str) -> dict[str, int]:
        """A run's current responses and evaluation records counted (``responses``,
        ``errors``, ``cached_responses``, ``candidates``, ``failed_candidates``,
        ``judgments``, ``judgment_errors``, ``scored``, ``passed``, ``failed``)."""
        return _lookup.run_counts(self._db, run_id)

    def load_run(self, run_id: str, *, include_superseded: bool = False) -> RunRecord:
        """A whole run (id or unique prefix): summary, responses and judgments in order.

        Responses are ordered by scenario, input, role, candidate, temperature and run
        index (missing inputs and roles first); judgments follow their responses, then
        criterion. Only current rows are loaded; with ``include_superseded`` the rows
        that a resume after an edit superseded are loaded too, into the record's
        ``superseded_responses`` and ``superseded_judgments``. Each response has its input
        row's values (``input_values``; one mapping per row, shared by its responses: do
        not change it), None without inputs or for answers recorded before rows were
        stored.
        """
        summary = self.get_run(run_id)
        responses = _results.load_responses(self._db, summary.id, include_superseded)
        judgments = _results.load_judgments(self._db, summary.id, responses, include_superseded)
        return RunRecord(summary=summary, responses=responses, judgments=judgments)

    def load_run_part(
        self,
        run_id: str,
        *,
        ids: Sequence[int] | None = None,
        offset: int = 0,
        limit: int | None = None,
        summary: RunSummary | None = None,
        evaluators: Sequence[str] | None = None,
    ) -> RunRecord:
        """Part of a run: some of its current responses, each with its current evaluation
        records, read from SQL without loading the rest (a page of a 100,000-answer run).

        Args:
            run_id: The run (id or unique prefix; the exact id when ``summary`` is given).
            ids: The responses' database ids (:meth:`run_response_ids`), in the order
                wanted; unknown ids are skipped.
            offset, limit: Without ``ids``: ``limit`` responses (all when None) from
                ``offset``, in the order they were recorded.
            summary: The run's summary when the caller has it (saves a query).
            evaluators: Read only these evaluators' records (default: every one); naming
                them lets the database seek them by index, without reading the run's
                other records (a page of a large run).

        Example:
            >>> page = store.load_run_part(run_id, offset=100, limit=50)
            >>> [r.key for r in page.responses], len(page.judgments)
        """
        found = summary if summary is not None else self.get_run(run_id)
        part = _parts.load_run_part(self._db, found.id, ids, offset, limit, evaluators)
        return RunRecord(summary=found, responses=part[0], judgments=part[1])

    def run_response_ids(self, run_id: str) -> dict[str, int]:
        """Response key -> database id, for the run's current responses (exact run id)."""
        return _parts.response_ids(self._db, run_id)

    def response_cells(
        self, run_id: str, size: int = 20_000
    ) -> Iterator[list[tuple[int, str, str | None, str | None, str, float | None, int]]]:
        """The cells of a run's current candidate responses, ``size`` at a time: (database
        id, scenario, input id, role, candidate, temperature, run index), in the order
        they were recorded (exact run id). What a viewer orders a large run by, without
        reading its texts."""
        return _parts.response_cells(self._db, run_id, size)

    def run_evaluators(self, run_id: str) -> list[str]:
        """The evaluators with current records in the run (exact run id), sorted: pass
        them to :meth:`load_run_part` to read a part's records by index."""
        return _parts.run_evaluators(self._db, run_id)

    def run_stamp(self, run_id: str) -> tuple[Any, ...] | None:
        """What changes whenever a run does (exact run id; None when no run has it): its
        status, finish time and a hash of its metadata, then (rows, highest row id) of its
        responses and of its evaluation records, superseded ones included. Cheap (the run's
        row and indexes): caches of a finished run check it instead of its counts."""
        return _parts.run_stamp(self._db, run_id)

    def search_run(self, run_id: str, word: str) -> set[int]:
        """Database ids of the run's current responses whose text, error, or an evaluation
        record's reasoning or unscored reason contains ``word`` (any case; exact run id)."""
        return _parts.search_run(self._db, run_id, word)

    def supersede(
        self,
        run_id: str,
        response_keys: Iterable[str] = (),
        evaluation_keys: Iterable[tuple[str, str, str]] = (),
    ) -> None:
        """Mark a run's current rows superseded: kept, but no longer loaded or counted.

        ``response_keys`` name responses; ``evaluation_keys`` name evaluation records by
        (evaluator, response_key, criterion). A later record with the same key is a new,
        current row beside the superseded one.
        """
        _results.supersede(self._db, run_id, response_keys, evaluation_keys)

    # ------------------------------------------------------------------ cache

    def cache_get_many(
        self,
        keys: Iterable[str],
        now: datetime | None = None,
        ttl: Mapping[str, float | None] | None = None,
    ) -> dict[str, CacheEntry]:
        """The unexpired cache entries among ``keys``, by key; ``ttl`` (kind -> seconds,
        None: forever) judges the kinds it names by their age now, not by the lifetime
        they were written with."""
        return _cache.cache_get_many(self._db, keys, now, ttl)

    def cache_put_many(self, entries: Sequence[CacheEntry]) -> None:
        """Store (or replace) cache entries; entries that are errors are skipped."""
        _cache.cache_put_many(self._db, entries)

    def cache_stats(self, ttl: Mapping[str, float | None] | None = None) -> dict[str, Any]:
        """Counts, sizes and ages of the cache, in total and per kind; ``expired``: the
        entries ``cache_get_many`` with the same ``ttl`` would not return now."""
        return _cache.cache_stats(self._db, ttl=ttl)

    def cache_kinds(self) -> set[str]:
        """The kinds of call that have cache entries (one cheap query)."""
        return _cache.cache_kinds(self._db)

    def cache_clear(
        self,
        kind: str | None = None,
        expired_only: bool = False,
        ttl: Mapping[str, float | None] | None = None,
    ) -> int:
        """Delete cache entries (all, one kind, or only expired) and return how many;
        expired: as ``cache_stats`` with the same ``ttl`` counts them."""
        return _cache.cache_clear(self._db, kind, expired_only, ttl=ttl)

    # ------------------------------------------------------------------ prompts

    def prompt_version(self, name: str, text: str) -> int:
        """The id of this prompt text under ``name``; a new text gets version max+1."""
        return self._prompts.version_id(name, text)

    def prompt_versions_many(self, pairs: Iterable[tuple[str, str]]) -> list[int]:
        """``prompt_version`` for each (name, text) pair, in order."""
        return self._prompts.many(pairs)

    def list_prompts(self, name: str | None = None) -> list[PromptVersion]:
        """Every stored prompt version (of one name), by name then version."""
        return self._prompts.list_all(name)

    def get_prompt(self, name: str, version: int) -> PromptVersion:
        """One version of a named prompt; StoreError when unknown."""
        return self._prompts.get(name, version)

    def get_prompt_by_id(self, version_id: int) -> PromptVersion:
        """A prompt version by the id that responses and judgments link to."""
        return self._prompts.get_by_id(version_id)

    # ------------------------------------------------------------------ reference review

    def reference_answers(
        self,
        status: str | None = None,
        run_id: str | None = None,
        call_keys: Iterable[str] | None = None,
    ) -> list[ReferenceAnswer]:
        """The distinct reference answers (by call key), newest first, with their review.

        ``status`` keeps those with that ground-truth status, ``run_id`` (id or unique
        prefix) those a run used, ``call_keys`` those keys.
        """
        full = None if run_id is None else _runs.resolve_run_id(self._db, run_id)
        return _references.reference_answers(self._db, status, full, call_keys)

    def find_reference(self, ident: str) -> str:
        """The call key of the reference answer whose call key is or starts with ``ident``."""
        return _references.find_reference(self._db, ident)

    def reference_reviews(
        self, call_keys: Iterable[str] | None = None, status: str | None = None
    ) -> dict[str, ReferenceReview]:
        """The reviews of ``call_keys`` (default: all; only ``status`` when given), by key.

        A reference answer without a review is ``unvalidated`` and absent here.
        """
        return _references.reference_reviews_of(self._db, call_keys, status)

    def reference_review(self, call_key: str) -> ReferenceReview | None:
        """The review of one reference answer (None: never reviewed, so unvalidated)."""
        return self.reference_reviews([call_key]).get(call_key)

    def reference_override(self, call_key: str) -> str | None:
        """The answer a person wrote in place of a reference answer, or None."""
        review = self.reference_review(call_key)
        return None if review is None else review.override_text

    def set_reference_status(
        self, call_key: str, status: str, notes: str | None, who: str
    ) -> ReferenceReview:
        """Set a reference answer's ground-truth status (``unvalidated``, ``validated``,
        ``needs_review``, ``disputed``) with notes, recording who did it in the audit trail.

        Raises:
            UnknownReferenceError: An unknown status, or no reference answer with this
                call key.
        """
        return _references.set_reference_status(self._db, call_key, status, notes, who)

    def override_reference(
        self, call_key: str, text: str, notes: str | None, who: str
    ) -> ReferenceReview:
        """Replace a reference answer by ``text`` (it becomes ``validated``); the audit
        trail keeps the text before and after, who and when.

        Raises:
            UnknownReferenceError: No reference answer with this call key.
        """
        return _references.override_reference(self._db, call_key, text, notes, who)

    # ------------------------------------------------------------------ human labels

    def record_labels(
        self,
        run_id: str,
        labels: Sequence[LabelRecord],
        *,
        source_name: str,
        source_sha256: str,
        who: str,
    ) -> LabelCounts:
        """Store people's labels of a run's answers (exact run id), all in one transaction.

        Keyed by (answer, criterion, labeller): a label already stored with the same score,
        pass/fail and notes is left as it is (importing a file twice changes nothing); one
        with other values is updated. ``who`` imported them from the file ``source_name``
        (SHA-256 ``source_sha256``).
        """
        return _labels.record_labels(
            self._db, run_id, labels, source_name=source_name, source_sha256=source_sha256, who=who
        )

    def labels(self, run_id: str, response_keys: Iterable[str] | None = None) -> list[LabelRecord]:
        """A run's labels (exact run id; of ``response_keys`` when given), ordered by
        answer, criterion and labeller."""
        return _labels.labels_of(self._db, run_id, response_keys)
