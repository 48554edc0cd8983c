"""Exploring a run's answers: filters, full-text search, sorting and pages.

A run's snapshot (``_snapshot``, built by ``_snapshot_build`` from the store in parts)
keeps a compact column per answer, answers a :class:`Query` over those columns, and reads
from the store only the page's answers (and, for a search, the ids of the answers whose
texts match).

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

from qualspec.web._answers import Answer, Page, Prompt
from qualspec.web._query import MAX_PER, NONE, PER_PAGE, SORTS, Query, score_text

__all__ = [
    "MAX_PER",
    "NONE",
    "PER_PAGE",
    "SORTS",
    "Answer",
    "Page",
    "Prompt",
    "Query",
    "score_text",
]
