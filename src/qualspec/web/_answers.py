"""One answer of a run as the run page shows it: its verdict, the cause of a FAIL, and what
was sent (:class:`Prompt`), made from its response and its own evaluation records
(:func:`make_answer`), the same for a run's whole index (``_explore``) and for one page of
a large run read from the store (``_snapshot``). Texts stay raw here: the templates escape
them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from qualspec.analysis import (
    CHECKS_EVALUATOR,
    AnswerVerdict,
    answer_verdict,
    format_temperature,
)
from qualspec.store import JudgmentRecord, ResponseRecord
from qualspec.web._query import Query, num_text, score_text
from qualspec.web._sent import row_shown, sent_message

__all__ = ["Answer", "Page", "Prompt", "PromptBook", "make_answer", "run_threshold"]


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
    parts: AnswerVerdict | None = None  # what its verdict was made from (its records')

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


class PromptBook:
    """The prompts a run's answers were sent with, by their prompt versions: texts by
    version id (ids it lacks show no prompt), each distinct set of versions read once."""

    def __init__(self, texts: Mapping[int, str] | None = None) -> None:
        self.texts = dict(texts or {})
        self.prompts: dict[tuple[Any, ...], Prompt] = {}
        self.hay: dict[tuple[Any, ...], str] = {}  # what a search reads of a prompt
        self._labels: dict[float | None, str] = {}

    def key(self, r: ResponseRecord) -> tuple[Any, ...]:
        """The answer's prompt key (its versions), its prompt made on first sight."""
        key = tuple(r.prompt_versions.values())
        if key not in self.prompts:
            prompt = self.prompts[key] = self._prompt(r)
            self.hay[key] = "\n".join(
                t for t in (prompt.system, prompt.preamble, prompt.prompt) if t
            )
        return key

    def _prompt(self, r: ResponseRecord) -> Prompt:
        texts: dict[str, str] = {}
        for name, version in r.prompt_versions.items():
            found = self.texts.get(version) if isinstance(version, int) else None
            if found is not None:
                texts[name.split(":", 1)[0]] = found
        return Prompt(
            texts.get("system_prompt"), texts.get("preamble"), texts.get("scenario_prompt"), None
        )

    def of(self, key: tuple[Any, ...]) -> Prompt:
        """The prompt parts of a key (none known: every part None)."""
        return self.prompts.get(key, Prompt(None, None, None, None))

    def sent_for(self, answer: Answer) -> Prompt:
        """What was sent for ``answer``: its prompt parts (shared by version), with its
        input row and the message rendered with it, made when asked (for one page's
        answers, never for the whole run)."""
        base = self.of(answer.prompt_key)
        r = answer.record
        sent, sent_note = sent_message(base.prompt, base.preamble, r.input_id, r.input_values)
        row, row_note = row_shown(r.input_id, r.input_values)
        return replace(base, sent=sent, row=row, row_note=row_note, sent_note=sent_note)

    def temperature(self, value: float | None) -> str:
        """A temperature as the page writes it (``0.7``, ``default``)."""
        found = self._labels.get(value)
        if found is None:
            found = self._labels[value] = format_temperature(value)
        return found


def run_threshold(metadata: Mapping[str, Any] | None) -> float | None:
    """The run's judge threshold from its metadata (None: not recorded)."""
    judge = (metadata or {}).get("judge")
    limit = judge.get("threshold") if isinstance(judge, Mapping) else None
    return float(limit) if isinstance(limit, int | float) else None


def make_answer(
    order: int,
    r: ResponseRecord,
    own: list[JudgmentRecord],
    threshold: float | None,
    book: PromptBook,
) -> Answer:
    """The :class:`Answer` of response ``r`` with its own records ``own`` (no comparison
    records), at position ``order`` of the run's answers; ``threshold``: the run's."""
    parts = answer_verdict(own, error=r.error is not None)
    limit = parts.judge_threshold if parts.judge_threshold is not None else threshold
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
        threshold=limit if scale == 10 else parts.grade_threshold,
        reasons=_reasons(parts, own, limit, passed),
        temperature=book.temperature(r.temperature),
        failing=tuple((j.evaluator, j.criterion) for j in own if j.passed is False),
        judged_on=tuple((j.evaluator, j.criterion) for j in own),
        prompt_key=book.key(r),
        texts=tuple(texts),
        parts=parts,
    )
