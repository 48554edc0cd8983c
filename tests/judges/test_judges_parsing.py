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
    ("score = 8.5", 8.5, "pattern"),
    ("Rating: 6 out of 10", 6.0, "pattern"),
    ("The score is 5 out of 10.", 5.0, "pattern"),
    ("Score (0-10): 4", 4.0, "pattern"),
    ("**Score:** 9\nReasoning: very clear", 9.0, "pattern"),
    ("Score: 8 ... SCORE: 8", 8.0, "pattern"),
    ("Score: 85/100", 8.5, "pattern"),
    ("I'd give it 8/10", 8.0, "pattern"),
    ("70/100", 7.0, "pattern"),
    ("8/10", 8.0, "pattern"),
    ("**8**", 8.0, "pattern"),
    ("Score: 0", 0.0, "pattern"),
    ("Score: 10", 10.0, "pattern"),
    ('{"score": 7.5}', 7.5, "json"),
    ('{"score": 0, "reasoning": "wrong"}', 0.0, "json"),
    ('{"score": "7"}', 7.0, "json"),
    ('{"score": "70/100"}', 7.0, "json"),
    ('{"Score": 3, "Reasoning": "weak"}', 3.0, "json"),
    ('{"judgment": {"score": 6, "reasoning": "x"}}', 6.0, "json"),
    ('[{"score": 4}]', 4.0, "json"),
    ("8", 8.0, "json"),
    ('```json\n{"score": 6, "reasoning": "fine"}\n```', 6.0, "json"),
    ("{'score': 8, 'reasoning': 'ok',}", 8.0, "repaired_json"),
    ('{score: 6, reasoning: "it\'s fine", ok: True}', 6.0, "repaired_json"),
    ("{'score': 5, 'reasoning': 'it's fine', 'sure': None}", 5.0, "repaired_json"),
    ('Sure! Verdict: {"score": 9, "reasoning": "great"} Hope it helps.', 9.0, "repaired_json"),
    ('Here:\n```json\n{"score": 2, "reasoning": "off topic",}\n```\nDone.', 2.0, "repaired_json"),
    ('{"score": 7}\nSCORE: 7', 7.0, "repaired_json"),
    ("{ I think 'maybe' } then {\"score\": 5}", 5.0, "repaired_json"),
    ('{"score": 8, "reasoning": "The answer is good but', 8.0, "pattern"),
]

UNSCORED = [
    # (judge output, a fragment of the unscored reason)
    ('{"score": "high"}', "not a number"),
    ('{"score": 15}', "outside 0-10"),
    ('{"score": -1}', "outside 0-10"),
    ('{"score": 10.5}', "outside 0-10"),
    ('{"score": 70}', "outside 0-10"),
    ('{"score": true}', "boolean"),
    ('{"score": false}', "boolean"),
    ('{"score": null}', "null"),
    ('{"score": [7]}', "not a number"),
    ('{"score": NaN}', "finite"),
    ('{"score": 1e999}', "finite"),
    ('{"score": 12345678901234567890123}', "outside 0-10"),
    ("{'score': True, 'reasoning': 'yes'}", "boolean"),
    ("true", "boolean"),
    ("Score: 3 ... Score: 9", "ambiguous"),
    ('{"score": 7} Score: 3', "ambiguous"),
    ('{"score": 4} and later {"score": 6}', "ambiguous"),
    ("Score: 7 ... Score: 15", "ambiguous"),
    ("", "empty"),
    ("   \n\t ", "empty"),
    ("SCORE: NaN", "finite"),
    ("Score: inf", "finite"),
    ("Score: -2", "outside 0-10"),
    ("Score: 15", "outside 0-10"),
    ("Score: 85", "outside 0-10"),
    ("Score: 4/5", "0-10 scale"),
    ("Score: high", "not a number"),
    ("Score: N/A", "not a number"),
    ("No idea what to say.", "no score"),
    ("The response mentions 12/10/2023 as a date", "no score"),
    ('Reply with only: {"score": <integer 0-10>, "reasoning": "..."}', "no score"),
    ("It was released in 2019 and has 3 parts.", "no score"),
]


def _check_invariants(result: ParsedJudgment) -> None:
    if result.score is None:
        assert result.method == "none"
        assert result.unscored_reason
    else:
        assert math.isfinite(result.score)
        assert 0.0 <= result.score <= 10.0
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


def test_invalid_structured_score_is_unscored_not_replaced_by_text() -> None:
    result = parse_judgment("Score: 8", {"score": 42, "reasoning": "?"})
    assert result.score is None
    assert "outside 0-10" in (result.unscored_reason or "")


def test_structured_without_a_score_falls_back_to_text() -> None:
    assert parse_judgment("Score: 2", {"foo": 1}).score == 2.0
    assert parse_judgment("Score: 2", "not json").score == 2.0
    assert parse_judgment("Score: 2", 17).score == 2.0


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
