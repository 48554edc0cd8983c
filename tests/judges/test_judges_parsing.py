"""Judge-output parsing: awkward answers never produce an invented score."""

from __future__ import annotations

import math
import random

import pytest

from qualspec.judges import MAX_REASONING_CHARS, ParsedJudgment, parse_judgment

SCORED = [
    # (judge output, expected score, expected method)
    ("Score: 7/10", 7.0, "pattern"),
    ("SCORE: 7", 7.0, "pattern"),
    ("score: 8.0", 8.0, "pattern"),
    ("Score: 7 out of 10", 7.0, "pattern"),
    ("**Score:** 9\nReasoning: very clear", 9.0, "pattern"),
    ("**SCORE: 6/10**", 6.0, "pattern"),
    ("### Score: 5", 5.0, "pattern"),
    ("Score: __4__.", 4.0, "pattern"),
    ("SCORE: 8\nSCORE: 8", 8.0, "pattern"),
    ("Score: 0", 0.0, "pattern"),
    ("Score: 10", 10.0, "pattern"),
    ('{"score": 8.0}', 8.0, "json"),
    ('{"score": 0, "reasoning": "wrong"}', 0.0, "json"),
    ('{"score": "7"}', 7.0, "json"),
    ('{"score": "7/10"}', 7.0, "json"),
    ('{"Score": 3, "Reasoning": "weak"}', 3.0, "json"),
    ('{"score": 6, "score": 6, "reasoning": "same twice"}', 6.0, "json"),
    ('{"score": 6, "reasoning": "The answer says SCORE: 10 and 9/10."}', 6.0, "json"),
    ('```json\n{"score": 6, "reasoning": "fine"}\n```', 6.0, "json"),
    ("{'score': 8, 'reasoning': 'ok',}", 8.0, "repaired_json"),
    ('{score: 6, reasoning: "it\'s fine", ok: True}', 6.0, "repaired_json"),
    ("{'score': 5, 'reasoning': 'it's fine', 'sure': None}", 5.0, "repaired_json"),
    ('Sure! Verdict: {"score": 9, "reasoning": "great"} Hope it helps.', 9.0, "repaired_json"),
    ('Here:\n```json\n{"score": 2, "reasoning": "off topic",}\n```\nDone.', 2.0, "repaired_json"),
    ('{"score": 7}\nSCORE: 7', 7.0, "repaired_json"),
    ("{ I think 'maybe' } then:\n{\"score\": 5}", 5.0, "repaired_json"),
    ('The answer contains {"score": 10} to trick me.\n{"score": 3}', 3.0, "repaired_json"),
    ('{"score": 8, "reasoning": "The answer is good but', 8.0, "repaired_json"),
    ('```json\n{"score": 3, "reasoning": "cut off', 3.0, "repaired_json"),
    ('It quotes "SCORE: 10" and 9/10 to trick the grader.\nSCORE: 2', 2.0, "pattern"),
    # the object the answer is reported to say is the answer's, not the judge's (issue 17)
    ('The answer says: {"score": 10}\n{"score": 3}', 3.0, "repaired_json"),
]

UNSCORED = [
    # (judge output, a fragment of the unscored reason)
    ('{"score": "high"}', "not a number"),
    ('{"score": 15}', "outside 0-10"),
    ('{"score": -1}', "outside 0-10"),
    ('{"score": 10.5}', "outside 0-10"),
    ('{"score": 70}', "outside 0-10"),
    ('{"score": 7.5}', "whole number"),
    ('{"score": 0.8, "reasoning": "good"}', "score 0.8 looks like a 0-1 scale"),
    ('{"score": 1.0}', "0-1 scale"),
    ('{"score": "70/100"}', "0-10 scale"),
    ('{"score": "8-9"}', "range"),
    ('{"score": true}', "boolean"),
    ('{"score": false}', "boolean"),
    ('{"score": null}', "null"),
    ('{"score": [7]}', "not a number"),
    ('{"score": NaN}', "finite"),
    ('{"score": 1e999}', "finite"),
    ('{"score": 12345678901234567890123}', "outside 0-10"),
    ('{"score": 7, "reasoning": "x", "score": 4}', "given twice"),
    ('{"score": 7, "Score": 4}', "given twice"),
    ('{"reasoning": "passes 7 out of 10 tests"}', "no score key"),
    ('{"judgment": {"score": 6, "reasoning": "x"}}', "no score key"),
    ('Verdict: {"rating": 8, "reasoning": "fine"}', "no score key"),
    ("{'score': True, 'reasoning': 'yes'}", "boolean"),
    ("true", "not an object"),
    ("8", "not an object"),
    ('[{"score": 4}]', "not an object"),
    ("Score: 3\nScore: 9", "ambiguous"),
    ('{"score": 7}\nScore: 3', "ambiguous"),
    ('{"score": 7} Score: 3', "ambiguous"),
    ('{"score": 4} and later {"score": 6}', "inside a sentence"),
    ('{"score": 4}\nand later\n{"score": 6}', "ambiguous"),
    ("Score: 7\nScore: 15", "ambiguous"),
    ("Score: 8 ... SCORE: 8", "more than a number"),
    ("Score: 1. On reflection, 6 would be fairer.", "more than a number"),
    ("SCORE: 1\nOn reflection, 6 would be fairer.", "revises"),
    ('{"score": 3}\nCorrection: make it a 5.', "revises"),
    ("", "empty"),
    ("   \n\t ", "empty"),
    ("SCORE: NaN", "finite"),
    ("Score: inf", "finite"),
    ("Score: -2", "outside 0-10"),
    ("Score: 15", "outside 0-10"),
    ("Score: 85", "outside 0-10"),
    ("Score: 7.5", "whole number"),
    ("Score: 4/5", "0-10 scale"),
    ("Score: 85/100", "0-10 scale"),
    ("Score: 10%", "percentage"),
    ("Score: 7,5", "decimal comma"),
    ("Score: 8-9", "range"),
    ("SCORE: 0-10", "range"),
    ("Score: 6 or 7", "alternatives"),
    ("Score: out of 10", "scale"),
    ("Score: high", "not a number"),
    ("Score: N/A", "not a number"),
    ("Score:", "no number"),
    # Free prose is never read, whatever it says.
    ("score = 8.5", "no score"),
    ("Rating: 6 out of 10", "no score"),
    ("Rating: 1-10", "no score"),
    ("The score is 5 out of 10.", "no score"),
    ("Score (0-10): 4", "no score"),
    ("I'd give it 8/10", "no score"),
    ("70/100", "no score"),
    ("8/10", "no score"),
    ("**8**", "no score"),
    ("Note: 9,5/10", "no score"),
    ("A score of 10 requires citing sources; this answer does not.", "no score"),
    ('The answer ends with "SCORE: 10", an injection.', "no score"),
    ("> SCORE: 10", "no score"),
    ("No idea what to say.", "no score"),
    ("The response mentions 12/10/2023 as a date", "no score"),
    ('Reply with only: {"score": <integer 0-10>, "reasoning": "..."}', "no score"),
    ("It was released in 2019 and has 3 parts.", "no score"),
    ('{"details": {"score": 3}', "cut off"),
    ('The answer contains {"score": 10} to trick me.', "inside a sentence"),
    ('{"score": 1', "cut off"),
]


def _check_invariants(result: ParsedJudgment) -> None:
    if result.score is None:
        assert result.method == "none"
        assert result.unscored_reason
    else:
        assert math.isfinite(result.score)
        assert 0.0 <= result.score <= 10.0
        assert result.score.is_integer()
        assert result.unscored_reason is None
        assert result.method in {"structured", "json", "repaired_json", "pattern"}
    if result.reasoning is not None:
        assert result.reasoning.strip()
        assert len(result.reasoning) <= MAX_REASONING_CHARS


@pytest.mark.parametrize(("text", "score", "method"), SCORED)
def test_scored_outputs(text: str, score: float, method: str) -> None:
    result = parse_judgment(text)
    assert result.score == score, result
    assert result.method == method
    _check_invariants(result)


@pytest.mark.parametrize(("text", "reason"), UNSCORED)
def test_unscored_outputs_never_invent_a_score(text: str, reason: str) -> None:
    result = parse_judgment(text)
    assert result.score is None, result
    assert reason in (result.unscored_reason or ""), result
    _check_invariants(result)


def test_zero_is_a_real_score_not_unscored() -> None:
    result = parse_judgment('{"score": 0, "reasoning": "Refused to answer."}')
    assert result.score == 0.0
    assert result.score is not None and result.scored
    assert result.unscored_reason is None
    assert result.reasoning == "Refused to answer."


def test_unscored_is_never_zero() -> None:
    for text, _ in UNSCORED:
        assert parse_judgment(text).score != 0


def test_structured_object_wins_over_text() -> None:
    result = parse_judgment("Score: 2", {"score": 9, "reasoning": "solid"})
    assert (result.score, result.method, result.reasoning) == (9.0, "structured", "solid")


def test_structured_json_text_is_accepted() -> None:
    result = parse_judgment("Score: 2", '{"score": 4, "reasoning": "meh"}')
    assert (result.score, result.method) == (4.0, "structured")


def test_invalid_structured_json_text_is_unscored() -> None:
    result = parse_judgment("Score: 2", '{"score": 4, "score": 5}')
    assert result.score is None
    assert "given twice" in (result.unscored_reason or "")


def test_structured_score_on_another_scale_is_unscored() -> None:
    result = parse_judgment('{"score": 0.8}', {"score": 0.8, "reasoning": "good"})
    assert result.score is None
    assert result.unscored_reason == "score 0.8 looks like a 0-1 scale"
    assert result.reasoning == "good"


def test_invalid_structured_score_is_unscored_not_replaced_by_text() -> None:
    result = parse_judgment("Score: 8", {"score": 42, "reasoning": "?"})
    assert result.score is None
    assert "outside 0-10" in (result.unscored_reason or "")


def test_structured_without_a_score_falls_back_to_text() -> None:
    assert parse_judgment("Score: 2", {"foo": 1}).score == 2.0
    assert parse_judgment("Score: 2", "not json").score == 2.0
    assert parse_judgment("Score: 2", 17).score == 2.0
    assert parse_judgment("Score: 2", [{"score": 9}]).score == 2.0


def test_reasoning_from_json_keys() -> None:
    for key in ("reasoning", "explanation", "reason", "rationale"):
        result = parse_judgment(f'{{"score": 6, "{key}": "because"}}')
        assert result.reasoning == "because", key


def test_reasoning_from_text_around_the_pattern() -> None:
    result = parse_judgment("The answer is correct.\nIt cites two sources.\n\nSCORE: 9")
    assert result.score == 9.0
    assert result.reasoning == "The answer is correct.\nIt cites two sources."
    cut = parse_judgment('{"score": 8, "reasoning": "The answer is good but')
    assert cut.reasoning == "The answer is good but"


def test_reasoning_after_the_score_line_is_kept_when_it_does_not_revise() -> None:
    result = parse_judgment("SCORE: 6\nIt covers 3 of the 4 points.")
    assert result.score == 6.0
    assert result.reasoning == "It covers 3 of the 4 points."


def test_unscored_keeps_pattern_context_out_of_the_score() -> None:
    result = parse_judgment("I would give it a 7. The answer passes 7 out of 10 tests.")
    assert result.score is None
    assert result.method == "none"


def test_reasoning_is_capped() -> None:
    result = parse_judgment('{"score": 5, "reasoning": "' + "x" * 5000 + '"}')
    assert result.score == 5.0
    assert result.reasoning is not None and len(result.reasoning) <= MAX_REASONING_CHARS


def test_unscored_keeps_json_reasoning() -> None:
    result = parse_judgment('{"score": "high", "reasoning": "very good"}')
    assert result.score is None
    assert result.reasoning == "very good"


_ALPHABET = [
    "{", "}", "[", "]", '"', "'", ":", ",", " ", "\n", "/", ".", "-", "=", "*", "`",
    "0", "1", "5", "7", "9", "10", "15", "100", "-3", "7.5", "1e999", "NaN", "inf",
    "score", "Score:", "SCORE", "rating", "reasoning", "out of", "true", "None", "high",
    "```json", "is", "of", "the", "(0-10)",
]  # fmt: skip


def test_random_strings_never_raise_and_stay_in_range() -> None:
    rng = random.Random(20240607)
    for _ in range(3000):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 30)))
        result = parse_judgment(text)
        _check_invariants(result)


def test_random_structured_objects_never_raise() -> None:
    rng = random.Random(7)
    values: list[object] = [
        None, True, False, 0, 7, 10, 11, -1, 7.5, float("nan"), float("inf"), "7", "x", [], {},
        [7], {"score": 3}, 10**400,
    ]  # fmt: skip
    for _ in range(500):
        obj = {rng.choice(["score", "Score", "rating", "x"]): rng.choice(values)}
        if rng.random() < 0.3:
            obj["reasoning"] = rng.choice(values)
        _check_invariants(parse_judgment(rng.choice(["", "Score: 5", "junk"]), obj))


def test_pathological_inputs_are_fast_and_safe() -> None:
    import time

    texts = [
        "{" * 20_000,
        "[" * 5_000 + "]" * 5_000,
        "'" * 10_000,
        '{"score": ' + "9" * 10_000 + "}",
        "Score: " + "1" * 10_000,
        "{ '" * 3_000,
        "score " * 5_000,
    ]
    start = time.perf_counter()
    for text in texts:
        _check_invariants(parse_judgment(text))
    assert time.perf_counter() - start < 5.0


def test_unscored_reasons_stay_short() -> None:
    long_texts = ('{"score": ' + "9" * 5_000 + "}", "Score: " + "1" * 5_000, "Score: 1/" + "7" * 99)
    for text in long_texts:
        result = parse_judgment(text)
        assert result.score is None
        assert len(result.unscored_reason or "") < 120
