"""Building a run's snapshot (``_snapshot``) from the store in parts, in constant memory
per answer: what ``qualspec run`` keeps at the end of a large run and what ``qualspec
serve`` builds on a run's first view, the same code for a run of any size.

1. The answers' cells (scenario, input, role, candidate, temperature, run index) are read
   a batch at a time (``Store.response_cells``: no texts) into compact arrays, and put in
   the suite's order (:func:`qualspec.analysis.suite_order`, the order of the run's
   verdicts) by numpy.
2. The answers are then read in that order, a part at a time (``Store.load_run_part`` by
   database id, with their evaluation records), each made an :class:`Answer` and added
   to the snapshot's columns, the overview's tally and the run's verdicts
   (:class:`qualspec.analysis.VerdictStream`: a cell's answers come together, a row's cells
   too), then dropped.

What grows with the run is a few numbers per answer (the columns), the distinct values
(inputs, prompts) and the matrix's rows (at most :data:`MATRIX_KEEP`; past them the
matrix says how many it left out, and the answers' filters still reach every answer).
"""

from __future__ import annotations

import functools
import heapq
from array import array
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from qualspec.analysis import (
    CHECKS_EVALUATOR,
    CellKey,
    RowKey,
    VerdictStream,
    answer_verdict,
    format_temperature,
    judgments_by_response,
    suite_order,
)
from qualspec.errors import StoreError
from qualspec.judges import is_comparison
from qualspec.store import RunRecord, RunSummary, Store
from qualspec.web._answers import Answer, PromptBook, make_answer, run_threshold
from qualspec.web._overview import Tally
from qualspec.web._query import FILTERS
from qualspec.web._run_page import cell_stats, facts, matrix_parts, matrix_row, page_parts
from qualspec.web._snapshot import Columns, StaleView

__all__ = ["MATRIX_KEEP", "PART", "build_view", "suite_ids"]

PART = 1000  # answers read from the store at a time
MATRIX_KEEP = 20_000
"""Candidate rows the matrix of a snapshot keeps (each is a few hundred bytes of JSON):
past them it counts the rest, and the answers' filters still reach every answer."""


_SORT_CHUNK = 8192  # values sorted at a time (their sort keys held at once)


def _ranks(table: dict[Any, int], part: Callable[[Any], Any], out: Any = None) -> Any:
    """Per code of ``table`` (value -> code), its rank among the values ordered by
    ``part(value)`` (ties: first seen first), written into ``out`` (default: a new array
    of one per value, for codes counted from 0): unique, so each value stays together.
    Sorted :data:`_SORT_CHUNK` values at a time and merged, so that a run's every input
    id is ranked without holding a sort key for each."""
    values, codes = list(table), list(table.values())

    def order(at: int) -> Any:
        return part(values[at])

    chunks = [
        sorted(range(start, min(start + _SORT_CHUNK, len(values))), key=order)
        for start in range(0, len(values), _SORT_CHUNK)
    ]
    if out is None:
        out = np.empty(len(values), dtype=np.int64)
    # merge is stable: equal keys come from the earlier chunk (seen first) first
    ranked = chunks[0] if len(chunks) == 1 else heapq.merge(*chunks, key=order)
    for rank, at in enumerate(ranked):
        out[codes[at]] = rank
    return out


def _input_rank(key: Callable[[CellKey], Any], scenario: str, input_id: Any) -> Any:
    """The part of the suite's sort key that orders a scenario's input rows."""
    return key((scenario, input_id, None, "", None))[1:3]


def suite_ids(store: Store, summary: RunSummary) -> Any:
    """The database ids of the run's current candidate responses in the suite's order
    (cells as :func:`qualspec.analysis.run_verdicts` orders them, each by run index)."""
    key = suite_order(RunRecord(summary=summary))
    tables: dict[str, dict[Any, int]] = {n: {} for n in ("s", "r", "c", "t")}
    inputs: dict[Any, dict[Any, int]] = {}  # scenario -> input id -> its row's code
    cols = {n: array("i") for n in ("s", "p", "r", "c", "t", "n")}
    ids = array("q")
    n_inputs = 0
    for batch in store.response_cells(summary.id):
        for row_id, scenario, input_id, role, candidate, temperature, run_index in batch:
            ids.append(row_id)
            for name, value in (("s", scenario), ("r", role), ("c", candidate), ("t", temperature)):
                table = tables[name]
                cols[name].append(table.setdefault(value, len(table)))
            rows = inputs.get(scenario)
            if rows is None:
                rows = inputs[scenario] = {}
            code = rows.get(input_id)
            if code is None:
                code = rows[input_id] = n_inputs
                n_inputs += 1
            cols["p"].append(code)
            cols["n"].append(run_index)
    if not ids:
        return np.zeros(0, dtype=np.int64)
    ranks = {
        "s": _ranks(tables["s"], lambda s: key((s, None, None, "", None))[0]),
        "r": _ranks(tables["r"], lambda r: key(("", None, r, "", None))[3:5]),
        "c": _ranks(tables["c"], lambda c: key(("", None, None, c, None))[5]),
        "t": _ranks(tables["t"], lambda t: key(("", None, None, "", t))[6]),
    }
    # an input row's rank among its scenario's (the scenario is sorted on first)
    ranks["p"] = np.empty(n_inputs, dtype=np.int64)
    for scenario, rows in inputs.items():
        _ranks(rows, functools.partial(_input_rank, key, scenario), ranks["p"])
    keys = [np.frombuffer(cols["n"], dtype=np.int32)]
    for name in ("t", "c", "r", "p", "s"):  # the last is the first sorted on
        keys.append(ranks[name][np.frombuffer(cols[name], dtype=np.int32)])
    order = np.lexsort(keys)
    return np.frombuffer(ids, dtype=np.int64)[order]


def _answers(
    store: Store, summary: RunSummary, ids: Any, book: PromptBook
) -> Iterator[tuple[int, Answer]]:
    """The answers of ``ids`` (in that order) with their ids, read :data:`PART` at a time.

    Raises:
        StaleView: An answer is no longer in the store.
    """
    threshold = run_threshold(summary.metadata)
    known: set[int] = set()
    # named, the evaluators let the database seek each part's records by index (unnamed,
    # it reads every record of the run for each part)
    evaluators = store.run_evaluators(summary.id)
    for start in range(0, len(ids), PART):
        wanted = [int(i) for i in ids[start : start + PART]]
        part = store.load_run_part(summary.id, ids=wanted, summary=summary, evaluators=evaluators)
        versions = {
            v
            for r in part.responses
            for v in r.prompt_versions.values()
            if isinstance(v, int) and v not in known
        }
        for version_id in sorted(versions):
            known.add(version_id)
            try:
                book.texts[version_id] = store.get_prompt_by_id(version_id).text
            except StoreError:  # a version this store does not hold: no prompt shown
                continue
        if len(part.responses) != len(wanted):  # changed since its cells were read
            raise StaleView(f"{len(wanted) - len(part.responses)} answers of the run are gone")
        judged = judgments_by_response(part)
        for offset, r in enumerate(part.responses):
            own = [j for j in judged.get(r.key, ()) if not is_comparison(j)]
            yield wanted[offset], make_answer(start + offset, r, own, threshold, book)


class _Verdicts:
    """The run's verdicts, counted as rows complete, and the matrix's rows."""

    def __init__(self, summary: RunSummary, tally: Tally) -> None:
        self.stream = VerdictStream(RunRecord(summary=summary))
        self.tally = tally
        self.run_id = summary.id
        self.cells = [0, 0, 0]  # passed, failed, no verdict
        self.rows = [0, 0, 0]
        self.candidates: dict[str, list[int]] = {}
        self.scores = {10: [0.0, 0], 100: [0.0, 0]}
        self.temperatures: dict[str, None] = {}
        self.matrix: list[dict[str, Any]] = []
        self.left_out = 0
        self.has_input = self.has_role = False

    def add(self, key: CellKey, answer: Answer) -> None:
        verdict = answer.parts  # made with the answer, from the same records
        if verdict is None:
            verdict = answer_verdict(answer.judgments, error=answer.record.error is not None)
        self._rows(self.stream.add(key, verdict))

    def close(self) -> None:
        self._rows(self.stream.close())

    def _rows(self, done: list[Any]) -> None:
        for row_key, row, cells in done:
            self._row(row_key, row, cells)

    def _row(self, row_key: RowKey, row: Any, cells: list[Any]) -> None:
        for cell_key, cell in cells:
            self.cells[0 if cell.passed is True else 1 if cell.passed is False else 2] += 1
            self.tally.add_cell(cell_key[3], cell.passed)
            if cell.score is not None and cell.scale in self.scores:
                self.scores[cell.scale][0] += cell.score
                self.scores[cell.scale][1] += 1
            self.temperatures.setdefault(format_temperature(cell_key[4]), None)
        slot = 0 if row.passed is True else 1 if row.passed is False else 2
        self.rows[slot] += 1
        self.candidates.setdefault(row_key[3], [0, 0, 0])[slot] += 1
        self.has_input = self.has_input or row_key[1] is not None
        self.has_role = self.has_role or row_key[2] is not None
        if len(self.matrix) < MATRIX_KEEP:
            self.matrix.append(matrix_row(row_key, row, cells))
        else:
            self.left_out += 1


def build_view(store: Store, summary: RunSummary) -> dict[str, Any]:
    """The snapshot (JSON-ready) of run ``summary``, read from ``store`` in parts (see the
    module docstring)."""
    ids = suite_ids(store, summary)
    book = PromptBook()
    columns = Columns()
    tally = Tally()
    verdicts = _Verdicts(summary, tally)
    checks: dict[str, set[str]] = {"criterion": set(), "check": set(), "evaluator": set()}
    answers = 0
    for row_id, answer in _answers(store, summary, ids, book):
        answers += 1
        columns.add(answer, row_id)
        tally.add(answer)
        r = answer.record
        temperature = None if r.temperature is None else float(r.temperature)
        verdicts.add((r.scenario, r.input_id, r.role, r.candidate, temperature), answer)
        for evaluator, criterion in answer.judged_on:
            checks["check" if evaluator == CHECKS_EVALUATOR else "criterion"].add(criterion)
            checks["evaluator"].add(evaluator)
    verdicts.close()
    options = {
        **{name: list(columns.tables[name]) for name in FILTERS if name in columns.tables},
        "evaluator": sorted(checks["evaluator"]),
        "criterion": sorted(checks["criterion"]),
        "check": sorted(checks["check"]),
    }
    options = {name: options[name] for name in (*FILTERS, "criterion", "check")}
    matrix = matrix_parts(
        verdicts.matrix,
        list(verdicts.temperatures),
        has_input=verdicts.has_input,
        has_role=verdicts.has_role,
    )
    matrix["left_out"] = verdicts.left_out
    scores = {k: (v[0], int(v[1])) for k, v in verdicts.scores.items()}
    cells = verdicts.cells
    candidates = {k: (v[0], v[1], v[2]) for k, v in verdicts.candidates.items()}
    parts = page_parts(
        summary.id,
        stats=cell_stats(cells[0], cells[1], scores),
        facts=facts(
            summary,
            answers,
            verdicts.stream.aggregation,
            (cells[0], cells[1], cells[2]),
            (verdicts.rows[0], verdicts.rows[1], verdicts.rows[2]),
            candidates,
        ),
        aggregation=verdicts.stream.aggregation,
        tally=tally,
        options=options,
        matrix=matrix,
    )
    return columns.snapshot(book.hay, parts)
