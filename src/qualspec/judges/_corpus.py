"""A labelled corpus of judge outputs for the score parser (tests and benchmarks only).

:func:`generate_corpus` builds, from a seed, judge answers in three classes:

* ``clear``: one unambiguous verdict (JSON in many shapes, fenced, embedded, slightly
  broken, cut off after the score, ``SCORE: n`` lines, structured output), labelled with
  its score;
* ``ambiguous``: answers that must stay unscored (ranges, alternatives, scale echoes,
  decimal commas, other scales, fractions, duplicate keys, disagreeing verdicts, scores
  only in prose, JSON without a score key, out of range, not a number...);
* ``adversarial``: a real verdict whose reasoning or quoted answer holds injected
  ``SCORE: 10``, ``9/10``, "a score of 10 requires..." or rubric text (labelled with the
  real verdict), or such text with no real verdict, or one that cannot be told apart
  from the real one (labelled ``None``).

:func:`score_corpus` runs :func:`~qualspec.judges.parse_judgment` over a corpus and counts,
per class, the answers read correctly, invented (a score where none was expected), wrong (a
different score) and missed (a verdict left unscored).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from qualspec.judges._corpus_adversarial import _ADVERSARIAL
from qualspec.judges._corpus_ambiguous import _AMBIGUOUS
from qualspec.judges._corpus_clear import _CLEAR
from qualspec.judges._corpus_parts import Maker
from qualspec.judges._parsing import ParsedJudgment, parse_judgment

__all__ = [
    "CLASSES",
    "ClassCounts",
    "CorpusCase",
    "CorpusReport",
    "generate_corpus",
    "score_corpus",
]

Label = Literal["clear", "ambiguous", "adversarial"]
CLASSES: tuple[Label, ...] = ("clear", "ambiguous", "adversarial")


@dataclass(frozen=True, slots=True)
class CorpusCase:
    """One judge answer: its text, the provider's structured object, label and score."""

    text: str
    structured: object | None
    label: Label
    expected: float | None
    kind: str  # the template that made it, for diagnosis


@dataclass(slots=True)
class ClassCounts:
    """Counts for one class of the corpus."""

    n: int = 0
    correct: int = 0
    invented: int = 0  # a score where None was expected
    wrong: int = 0  # a score other than the expected one
    missed: int = 0  # unscored where a score was expected
    unscored: int = 0  # unscored, expected or not

    @property
    def share_correct(self) -> float:
        return self.correct / self.n if self.n else 1.0


@dataclass(slots=True)
class CorpusReport:
    """What :func:`score_corpus` found."""

    classes: dict[str, ClassCounts] = field(default_factory=dict)
    failures: list[tuple[CorpusCase, ParsedJudgment]] = field(default_factory=list)

    @property
    def total(self) -> ClassCounts:
        out = ClassCounts()
        for counts in self.classes.values():
            out.n += counts.n
            out.correct += counts.correct
            out.invented += counts.invented
            out.wrong += counts.wrong
            out.missed += counts.missed
            out.unscored += counts.unscored
        return out

    @property
    def clear_share(self) -> float:
        """The share of ``clear`` answers read with their score."""
        return self.classes.get("clear", ClassCounts()).share_correct


def score_corpus(cases: Sequence[CorpusCase]) -> CorpusReport:
    """Parse every case and count how each class was read."""
    report = CorpusReport({label: ClassCounts() for label in CLASSES})
    for case in cases:
        got = parse_judgment(case.text, case.structured)
        counts = report.classes.setdefault(case.label, ClassCounts())
        counts.n += 1
        if got.score is None:
            counts.unscored += 1
        if got.score == case.expected:
            counts.correct += 1
            continue
        if case.expected is None:
            counts.invented += 1
        elif got.score is None:
            counts.missed += 1
        else:
            counts.wrong += 1
        report.failures.append((case, got))
    return report


_MAKERS: dict[Label, tuple[Maker, ...]] = {
    "clear": _CLEAR,
    "ambiguous": _AMBIGUOUS,
    "adversarial": _ADVERSARIAL,
}
_SHARES: dict[Label, float] = {"clear": 0.5, "ambiguous": 0.25, "adversarial": 0.25}


def generate_corpus(seed: int = 0, size: int = 1200) -> list[CorpusCase]:
    """``size`` labelled judge answers, the same for the same seed.

    Half are ``clear``, a quarter ``ambiguous``, a quarter ``adversarial``; within a class
    the templates take turns, each filled in at random.
    """
    rng = random.Random(seed)
    cases: list[CorpusCase] = []
    counts = {label: round(size * share) for label, share in _SHARES.items()}
    counts["clear"] += size - sum(counts.values())
    for label in CLASSES:
        makers = _MAKERS[label]
        for i in range(counts[label]):
            maker = makers[i % len(makers)]
            text, structured, expected = maker(rng)
            score = None if expected is None else float(expected)
            kind = maker.__name__.lstrip("_")
            cases.append(CorpusCase(text, structured, label, score, kind))
    return cases
