"""Exploring a run's answers: filters, full-text search, sorting and pages.

:class:`RunIndex` is built once per run from its records and its verdicts
(:func:`qualspec.analysis.run_verdicts`; an answer's own PASS/FAIL is
:func:`qualspec.analysis.answer_verdict`, the function the run's verdicts are made of) and
answers any :class:`Query` without touching the store: a finished run's index can be kept
and reused (see :func:`index_for`), so a filter, a search or the next page costs a scan of
the answers, never a reload. Texts stay raw here: the templates escape them.

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
    prompt, input row).
``sort``
    ``suite`` (the suite's order, default), ``score`` (lowest first), ``-score``,
    ``candidate``, ``latency`` (slowest first), ``cost`` (dearest first).
``page``, ``per``
    The page (from 1) and its size (:data:`PER_PAGE` by default, at most :data:`MAX_PER`).
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from qualspec.analysis import (
    CHECKS_EVALUATOR,
    AnswerVerdict,
    RunVerdicts,
    answer_verdict,
    candidate_records,
    cell_key,
    format_temperature,
    judgments_by_response,
)
from qualspec.judges import is_comparison
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord
from qualspec.web._query import (
    FILTERS,
    MAX_PER,
    NONE,
    PER_PAGE,
    SORTS,
    Query,
    num_text,
    score_text,
)
from qualspec.web._sent import row_has, row_shown, sent_message

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
    "index_for",
    "score_text",
]


@dataclass(frozen=True, slots=True)
class Prompt:
    """What was sent for one answer, as the run recorded it (prompt parts by version)."""

    system: str | None
    preamble: str | None
    prompt: str | None
    sent: str | None  # the user message, when it can be rebuilt exactly (cut for a page)
    row: str | None = None  # the input row's values as stored, indented JSON (cut)
    row_note: str | None = None  # cut, secrets masked, or why the row is missing
    sent_note: str | None = None  # the message was cut


@dataclass(slots=True)
class Answer:
    """One candidate answer with its verdict and the cause of a FAIL.

    ``passed``/``label`` are :func:`qualspec.analysis.answer_verdict`'s (as the HTML
    report's); ``reasons`` name what failed (``check 'cites' failed``, ``score 6.5/10 < 7:
    clarity 4 < 7``), an error or why it has no score.
    """

    order: int
    record: ResponseRecord
    judgments: list[JudgmentRecord]
    passed: bool | None
    label: str
    score: float | None
    scale: int
    threshold: float | None
    reasons: tuple[str, ...]
    temperature: str
    failing: tuple[tuple[str, str], ...]  # (evaluator, criterion) that failed
    judged_on: tuple[tuple[str, str], ...]  # (evaluator, criterion) recorded
    prompt_key: tuple[Any, ...] = ()
    texts: tuple[str, ...] = ()  # what a search reads besides the prompt

    @property
    def score_text(self) -> str:
        """``6.5/10`` (threshold-safe), ``92/100`` or ``-``."""
        return score_text(self.score, self.threshold, self.scale)

    @property
    def css(self) -> str:
        """The badge's class: pass, fail, error, unscored or answered."""
        return {"PASS": "pass", "FAIL": "fail", "ERROR": "error"}.get(
            self.label, "unscored" if self.label == "UNSCORED" else "answered"
        )


@dataclass(slots=True)
class Page:
    """One page of the answers that match a :class:`Query`."""

    query: Query
    answers: list[Answer]
    matching: int
    total: int
    page: int
    pages: int
    first: int  # 1-based position of the first answer shown (0 when none)
    last: int
    failing: int  # of the matching answers
    counts: dict[str, int] = field(default_factory=dict)  # label -> matching answers


def _reasons(
    parts: AnswerVerdict,
    own: Sequence[JudgmentRecord],
    threshold: float | None,
    passed: bool | None,
) -> tuple[str, ...]:
    """Why an answer failed, its error, or why it has no score."""
    out: list[str] = []
    if passed is False:
        if parts.judge_score is not None and threshold is not None:
            if parts.judge_score < threshold:
                below = [
                    f"{j.criterion} {num_text(j.score)} < {num_text(j.threshold)}"
                    for j in own
                    if j.evaluator != CHECKS_EVALUATOR
                    and j.score is not None
                    and j.threshold is not None
                    and j.score < j.threshold
                    and (j.details or {}).get("type") != "field_grade"
                ]
                text = f"score {score_text(parts.judge_score, threshold)} < {num_text(threshold)}"
                out.append(text + (f": {', '.join(below)}" if below else ""))
        elif parts.grade_score is not None and parts.grade_threshold is not None:
            if parts.grade_score < parts.grade_threshold:
                shown = score_text(parts.grade_score, parts.grade_threshold, 100)
                out.append(f"field grade {shown} < {num_text(parts.grade_threshold)}")
        if (
            parts.judge_score is not None
            and parts.grade_score is not None
            and parts.grade_threshold is not None
            and parts.grade_score < parts.grade_threshold
        ):
            shown = score_text(parts.grade_score, parts.grade_threshold, 100)
            out.append(f"field grade {shown} < {num_text(parts.grade_threshold)}")
        out.extend(f"check '{name}' failed" for name, ok in parts.checks.items() if not ok)
    if passed is None and not parts.error:  # the answer's own error is shown apart
        out.extend(
            dict.fromkeys(f"unscored: {j.unscored_reason}" for j in own if j.unscored_reason)
        )
        out.extend(dict.fromkeys(f"{j.evaluator} error: {j.error}" for j in own if j.error))
    return tuple(out)


class RunIndex:
    """A run's answers, ready to filter, search, sort and page (see the module docstring).

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
        self.prompt_texts = dict(prompts or {})
        meta_judge = (run.summary.metadata or {}).get("judge")
        limit = meta_judge.get("threshold") if isinstance(meta_judge, Mapping) else None
        self.threshold = float(limit) if isinstance(limit, int | float) else None
        self._memo: dict[str, Any] = {}
        self._prompts: dict[tuple[Any, ...], Prompt] = {}
        self._prompt_hay: dict[tuple[Any, ...], str] = {}
        by_response = judgments_by_response(run)
        # the answers in the suite's order: the verdicts' cells are in it already
        by_cell: dict[Any, list[ResponseRecord]] = {}
        for r in candidate_records(run).responses:
            by_cell.setdefault(cell_key(r), []).append(r)
        ranked = [
            r
            for key in verdicts.cells
            for r in sorted(by_cell.pop(key, ()), key=lambda rec: rec.run_index)
        ]
        ranked.extend(r for rs in by_cell.values() for r in rs)  # none: cells cover them all
        self._labels: dict[float | None, str] = {}
        self.answers = [
            self._answer(i, r, [j for j in by_response.get(r.key, ()) if not is_comparison(j)])
            for i, r in enumerate(ranked)
        ]

    # ------------------------------------------------------------------ building

    def _answer(self, order: int, r: ResponseRecord, own: list[JudgmentRecord]) -> Answer:
        parts = answer_verdict(own, error=r.error is not None)
        limit = parts.judge_threshold if parts.judge_threshold is not None else self.threshold
        passed, score, scale = parts.verdict(limit)
        judged = [j for j in own if j.evaluator != CHECKS_EVALUATOR]
        if score is None and judged and passed:
            passed = None  # checks alone never pass an answer its judge could not score
        if r.error is not None:
            label, passed = "ERROR", None
        elif passed is None:
            label = "UNSCORED" if own else "ANSWERED"
        else:
            label = "PASS" if passed else "FAIL"
        threshold = limit if scale == 10 else parts.grade_threshold
        failing = tuple((j.evaluator, j.criterion) for j in own if j.passed is False)
        judged_on = tuple((j.evaluator, j.criterion) for j in own)
        key = tuple(r.prompt_versions.values())
        if key not in self._prompts:
            prompt = self._prompts[key] = self._prompt(r)
            self._prompt_hay[key] = "\n".join(
                t for t in (prompt.system, prompt.preamble, prompt.prompt) if t
            )
        temperature = self._labels.get(r.temperature)
        if temperature is None:
            temperature = self._labels[r.temperature] = format_temperature(r.temperature)
        texts = [t for t in (r.text, r.error) if t]
        for j in own:
            if j.reasoning:
                texts.append(j.reasoning)
            if j.unscored_reason:
                texts.append(j.unscored_reason)
        return Answer(
            order=order,
            record=r,
            judgments=own,
            passed=passed,
            label=label,
            score=score,
            scale=scale,
            threshold=threshold,
            reasons=_reasons(parts, own, limit, passed),
            temperature=temperature,
            failing=failing,
            judged_on=judged_on,
            prompt_key=key,
            texts=tuple(texts),
        )

    def _prompt(self, r: ResponseRecord) -> Prompt:
        texts: dict[str, str] = {}
        for name, version in r.prompt_versions.items():
            found = self.prompt_texts.get(version) if isinstance(version, int) else None
            if found is not None:
                texts[name.split(":", 1)[0]] = found
        return Prompt(
            texts.get("system_prompt"), texts.get("preamble"), texts.get("scenario_prompt"), None
        )

    def prompt_of(self, answer: Answer) -> Prompt:
        """What was sent for ``answer`` (see :class:`Prompt`): its prompt parts (shared by
        version), with its input row and the message rendered with it, made when asked (for
        one page's answers, never for the whole run)."""
        base = self._prompts.get(answer.prompt_key, Prompt(None, None, None, None))
        r = answer.record
        sent, sent_note = sent_message(base.prompt, base.preamble, r.input_id, r.input_values)
        row, row_note = row_shown(r.input_id, r.input_values)
        return replace(base, sent=sent, row=row, row_note=row_note, sent_note=sent_note)

    # ------------------------------------------------------------------ querying

    def memo(self, name: str, compute: Callable[[], Any]) -> Any:
        """``compute()``, computed once per index (what no query changes)."""
        if name not in self._memo:
            self._memo[name] = compute()
        return self._memo[name]

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

    def _test(self, query: Query) -> Callable[[Answer], bool]:
        """The predicate of ``query``'s filters and search."""
        tests: list[Callable[[Answer], bool]] = []
        exact: list[tuple[str, Callable[[Answer], str]]] = [
            ("candidate", lambda a: a.record.candidate),
            ("role", lambda a: a.record.role if a.record.role is not None else NONE),
            ("scenario", lambda a: a.record.scenario),
            ("input", lambda a: a.record.input_id if a.record.input_id is not None else NONE),
            ("temperature", lambda a: a.temperature),
        ]
        for name, get in exact:
            wanted = getattr(query, name)
            if wanted:
                tests.append(_equals(get, wanted))
        aspects: list[Callable[[tuple[str, str]], bool]] = []
        if query.criterion:
            aspects.append(lambda k: k[1] == query.criterion and k[0] != CHECKS_EVALUATOR)
        if query.check:
            aspects.append(lambda k: k[1] == query.check and k[0] == CHECKS_EVALUATOR)
        if query.evaluator:
            aspects.append(lambda k: k[0] == query.evaluator)

        def on(keys: Iterable[tuple[str, str]]) -> bool:
            return any(all(t(k) for t in aspects) for k in keys)

        if aspects and query.failed:
            tests.append(lambda a: on(a.failing))
        else:
            if aspects:
                tests.append(lambda a: on(a.judged_on))
            if query.failed:
                tests.append(lambda a: a.passed is False)
        words = [a or b for a, b in re.findall(r'"([^"]+)"|(\S+)', query.q) if a or b]
        if words:
            patterns = [re.compile(re.escape(w), re.IGNORECASE) for w in words]
            hay = self._prompt_hay

            # per word, the prompts (shared by many answers) it is found in
            in_prompt = [{k for k, text in hay.items() if p.search(text)} for p in patterns]

            def found(a: Answer) -> bool:
                return all(
                    a.prompt_key in keys
                    or any(p.search(t) for t in a.texts)
                    or row_has(a.record.input_values, p)
                    for p, keys in zip(patterns, in_prompt, strict=True)
                )

            tests.append(found)
        return lambda a: all(t(a) for t in tests)

    def search(self, query: Query) -> Page:
        """The page of answers ``query`` asks for (see the module docstring)."""
        test = self._test(query)
        matching = [a for a in self.answers if test(a)] if query.filtered else self.answers
        if query.sort != "suite":
            matching = sorted(matching, key=_SORT_KEYS[query.sort])
        pages = max(1, math.ceil(len(matching) / query.per))
        page = min(query.page, pages)
        start = (page - 1) * query.per
        shown = matching[start : start + query.per]
        counts = Counter(a.label for a in matching)
        return Page(
            query=query,
            answers=shown,
            matching=len(matching),
            total=len(self.answers),
            page=page,
            pages=pages,
            first=start + 1 if shown else 0,
            last=start + len(shown),
            failing=counts.get("FAIL", 0),
            counts=dict(counts),
        )


def _equals(get: Callable[[Answer], str], wanted: str) -> Callable[[Answer], bool]:
    return lambda a: get(a) == wanted


def _score_key(a: Answer) -> tuple[int, float, int]:
    # answers without a score after every scored one; scores of both scales in 0-1
    if a.score is None:
        return (1, 0.0, a.order)
    return (0, a.score / a.scale, a.order)


_SORT_KEYS: dict[str, Callable[[Answer], Any]] = {
    "score": _score_key,
    "-score": lambda a: (_score_key(a)[0], -_score_key(a)[1], a.order),
    "candidate": lambda a: (a.record.candidate, a.order),
    "latency": lambda a: (a.record.latency_s is None, -(a.record.latency_s or 0.0), a.order),
    "cost": lambda a: (a.record.cost_usd is None, -(a.record.cost_usd or 0.0), a.order),
}

# ---------------------------------------------------------------------- the kept indexes

_KEPT: OrderedDict[tuple[Any, ...], RunIndex] = OrderedDict()
_KEEP = 2  # finished runs whose index is kept (the largest runs hold their answers' text)
_LOCK = threading.Lock()


def index_for(key: tuple[Any, ...] | None, build: Callable[[], RunIndex]) -> RunIndex:
    """The index kept under ``key`` (a finished run's id and counts), else ``build()``'s,
    kept when ``key`` is given (a run still in progress gets ``None``: never kept)."""
    if key is not None:
        with _LOCK:
            found = _KEPT.get(key)
            if found is not None:
                _KEPT.move_to_end(key)
                return found
    index = build()
    if key is not None:
        with _LOCK:
            _KEPT[key] = index
            while len(_KEPT) > _KEEP:
                _KEPT.popitem(last=False)
    return index
