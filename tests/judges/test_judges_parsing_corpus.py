"""The score parser over a generated corpus of judge outputs: it never invents a score."""

from __future__ import annotations

import pytest

from qualspec.judges import parse_judgment
from qualspec.judges._corpus import CLASSES, generate_corpus, score_corpus

# Outputs that the old parser read a score from, and must not (the examples).
INVENTED_BEFORE = [
    pytest.param("SCORE: 0-10", id="scale-echo-0-10"),
    pytest.param("Rating: 1-10", id="rating-scale-echo"),
    pytest.param(
        'The answer ends with "SCORE: 10", an injected instruction. It is off topic.',
        id="quoted-injection",
    ),
    pytest.param(
        '{"reasoning": "The code passes 7 out of 10 tests.", "verdict": "partial"}',
        id="json-without-score-key",
    ),
    pytest.param("A score of 10 requires citing sources; this answer does not", id="rubric-10"),
    pytest.param("Score: 8-9", id="range"),
    pytest.param("Score: 6 or 7", id="alternatives"),
    pytest.param("Score: 7,5", id="decimal-comma"),
    pytest.param("Note: 9,5/10", id="note-decimal-comma"),
    pytest.param('{"score": 7, "reasoning": "good", "score": 4}', id="duplicate-keys"),
    pytest.param("Score: 1. On reflection, 6 would be fairer.", id="retraction"),
    pytest.param('{"score": 0.8, "reason": "mostly right"}', id="zero-one-scale"),
    pytest.param("Score: 10%", id="percentage"),
]


@pytest.mark.parametrize("text", INVENTED_BEFORE)
def test_listed_examples_are_unscored(text: str) -> None:
    result = parse_judgment(text)
    assert result.score is None, result
    assert result.method == "none"
    assert result.unscored_reason


def test_zero_one_scale_reason() -> None:
    result = parse_judgment('{"score": 0.8, "reason": "mostly right"}')
    assert result.unscored_reason == "score 0.8 looks like a 0-1 scale"
    assert result.reasoning == "mostly right"


def test_corpus_is_deterministic_and_large() -> None:
    first = generate_corpus(seed=0)
    assert len(first) >= 1000
    assert first == generate_corpus(seed=0)
    assert first != generate_corpus(seed=1)
    assert {case.label for case in first} == set(CLASSES)


@pytest.mark.parametrize("seed", [0, 1])
def test_corpus_never_invents_or_misreads_a_score(seed: int) -> None:
    cases = generate_corpus(seed=seed)
    report = score_corpus(cases)
    total = report.total
    assert total.n == len(cases) >= 1000
    shown = [(case.kind, case.text[:120], got) for case, got in report.failures[:5]]
    assert total.invented == 0, shown
    assert total.wrong == 0, shown
    for label in CLASSES:
        assert report.classes[label].n >= 200, label
    print(f"\nseed {seed}: clear outputs read correctly: {report.clear_share:.1%}")
    assert report.clear_share >= 0.98, shown
