"""Exploring a run's answers: filters, full-text search, sorting and pages.

:class:`RunIndex` is a run's every answer with its verdict, built from the whole run and
its verdicts (:func:`qualspec.analysis.run_verdicts`; an answer's own PASS/FAIL is
:func:`qualspec.analysis.answer_verdict`, the function the run's verdicts are made of).
It is what a run's snapshot is made of (``_snapshot``): the snapshot keeps a compact
column per answer, answers a :class:`Query` over those columns, and reads from the store
only the page's answers (and, for a search, the ids of the answers whose texts match).

The query string (every parameter optional; a view is shared by its URL):

``failed=1``
    Failing answers only; with ``criterion``, ``check`` or ``evaluator``, the answers on
    which that criterion, check or evaluator said FAIL.
``candidate``, ``role``, ``scenario``, ``input``, ``temperature``, ``evaluator``
    Exact values (``temperature`` as shown: ``0.7``, ``default``; ``role`` and ``input``
    ``-`` for none).
``criterion``, ``check``
    Answers judged on that criterion (by the judges) or that ran that ``expect:`` check.
``q``
    Words (or ``"quoted phrases"``) that must all appear, in any case, in the answer, its
    error, an evaluator's reasoning, or the prompt sent (system prompt, preamble, scenario
    prompt).
``sort``
    ``suite`` (the suite's order, default), ``score`` (lowest first), ``-score``,
    ``candidate``, ``latency`` (slowest first), ``cost`` (dearest first).
``page``, ``per``
    The page (from 1) and its size (:data:`PER_PAGE` by default, at most :data:`MAX_PER`).
"""

from __future__ import annotations

from collections.abc import Mapping

from qualspec.analysis import (
    CHECKS_EVALUATOR,
    RunVerdicts,
    candidate_records,
    cell_key,
    judgments_by_response,
)
from qualspec.judges import is_comparison
from qualspec.store import ResponseRecord, RunRecord
from qualspec.web._answers import Answer, Page, Prompt, PromptBook, make_answer, run_threshold
from qualspec.web._query import FILTERS, MAX_PER, NONE, PER_PAGE, SORTS, Query, score_text

__all__ = [
    "MAX_PER",
    "NONE",
    "PER_PAGE",
    "SORTS",
    "Answer",
    "Page",
    "Prompt",
    "Query",
    "RunIndex",
    "score_text",
]


class RunIndex:
    """A run's answers in the suite's order, each with its verdict (see the module
    docstring).

    Args:
        run: The run as stored.
        verdicts: Its verdicts (``run_verdicts(run)``): the cells and rows the page shows.
        prompts: Prompt version id -> text, for the ids the run's answers link to
            (``ResponseRecord.prompt_versions``); missing ids show no prompt.
    """

    def __init__(
        self, run: RunRecord, verdicts: RunVerdicts, prompts: Mapping[int, str] | None = None
    ) -> None:
        self.run = run
        self.verdicts = verdicts
        self.book = PromptBook(prompts)
        self.threshold = run_threshold(run.summary.metadata)
        by_response = judgments_by_response(run)
        # the answers in the suite's order: the verdicts' cells are in it already
        by_cell: dict[object, list[ResponseRecord]] = {}
        for r in candidate_records(run).responses:
            by_cell.setdefault(cell_key(r), []).append(r)
        ranked = [
            r
            for key in verdicts.cells
            for r in sorted(by_cell.pop(key, ()), key=lambda rec: rec.run_index)
        ]
        ranked.extend(r for rs in by_cell.values() for r in rs)  # none: cells cover them all
        self.answers = [
            make_answer(
                i,
                r,
                [j for j in by_response.get(r.key, ()) if not is_comparison(j)],
                self.threshold,
                self.book,
            )
            for i, r in enumerate(ranked)
        ]

    def prompt_of(self, answer: Answer) -> Prompt:
        """What was sent for ``answer`` (see :class:`Prompt`)."""
        return self.book.sent_for(answer)

    def options(self) -> dict[str, list[str]]:
        """The values each filter can take, in suite order."""
        out: dict[str, dict[str, None]] = {n: {} for n in (*FILTERS, "criterion", "check")}
        for a in self.answers:
            r = a.record
            out["candidate"][r.candidate] = None
            out["role"][r.role if r.role is not None else NONE] = None
            out["scenario"][r.scenario] = None
            out["input"][r.input_id if r.input_id is not None else NONE] = None
            out["temperature"][a.temperature] = None
            for evaluator, criterion in a.judged_on:
                if evaluator == CHECKS_EVALUATOR:
                    out["check"][criterion] = None
                else:
                    out["criterion"][criterion] = None
                out["evaluator"][evaluator] = None
        for name in ("criterion", "check", "evaluator"):
            out[name] = dict.fromkeys(sorted(out[name]))
        return {k: list(v) for k, v in out.items()}
