"""Reading the models' answers: never a made-up rubric or score."""

from __future__ import annotations

import pytest

from qualspec.rubrics import (
    extractor_prompt_name,
    parse_extraction,
    parse_rubric_score,
    parse_summary,
    weighted_score,
)
from qualspec.store import redact_text

RUBRIC = (
    '{"name": "Clear Goals", "description": "States the goal.", '
    '"scoring_criteria": "1: vague 5: precise", "evidence": "Turn 1"}'
)


def test_extraction_finds_the_array_in_prose_and_fences() -> None:
    answer = f"Sure! Here are the rubrics:\n```json\n[{RUBRIC}]\n```\nHope this helps [1]."
    found = parse_extraction(answer, "abc")
    assert found.problems == []
    assert found.rubrics == [
        {
            "id": "abc_001",
            "name": "Clear Goals",
            "description": "States the goal.",
            "scoring_criteria": "1: vague 5: precise",
            "evidence": "Turn 1",
        }
    ]
    other = RUBRIC.replace("Clear Goals", "Small Steps")
    bare = parse_extraction(f"The list [see below]: [{RUBRIC}, {other}] end", "s")
    assert [r["id"] for r in bare.rubrics] == ["s_001", "s_002"]


def test_extraction_drops_rubrics_missing_required_fields_and_names_them() -> None:
    answer = (
        '[{"name": "A", "description": "d", "scoring_criteria": "c"},'
        ' {"name": "B", "description": "d"},'
        ' {"description": "no name", "scoring_criteria": "c"},'
        ' "text",'
        ' {"id": "mine", "name": "C", "description": "d",'
        '  "scoring_criteria": {"1": "poor", "5": "great"}}]'
    )
    found = parse_extraction(answer, "x")
    assert [r["name"] for r in found.rubrics] == ["A", "C"]
    assert [r["id"] for r in found.rubrics] == ["x_001", "mine"]
    assert found.rubrics[1]["scoring_criteria"] == "1: poor\n5: great"
    assert "evidence" not in found.rubrics[0]
    assert found.problems == [
        "rubric 2: missing scoring_criteria",
        "rubric 3: missing name",
        "rubric 4: not an object",
    ]


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("", "empty answer"),
        ("I could not find any rubric.", "no JSON array of rubrics in the answer"),
        ("[1, 2, 3]", "no JSON array of rubrics in the answer"),
        ('[{"name": "A", "description": "d", "scoring_crit', "no JSON array of rubrics"),
    ],
)
def test_extraction_without_rubrics_reads_nothing(answer: str, problem: str) -> None:
    found = parse_extraction(answer)
    assert found.rubrics == [] and found.problems[0].startswith(problem)


def test_copies_of_the_prompts_example_and_repeats_are_dropped() -> None:
    example = (
        '{"name": "Example Rubric Name", "description": "What this measures...", '
        '"scoring_criteria": "1: Poor... 5: Excellent...", "evidence": "In turn 3, the user..."}'
    )
    found = parse_extraction(f"[{example}, {RUBRIC}, {RUBRIC}, {example}]")
    assert [r["name"] for r in found.rubrics] == ["Clear Goals"]
    assert found.problems == [
        "rubric 1: the prompt's example, copied",
        "rubric 3: a repeat of an earlier rubric",
        "rubric 4: the prompt's example, copied",
    ]


def test_extraction_reads_objects_without_an_array() -> None:
    other = RUBRIC.replace("Clear Goals", "Small Steps")
    found = parse_extraction(f"First: {RUBRIC}\nSecond: {other}")
    assert [r["name"] for r in found.rubrics] == ["Clear Goals", "Small Steps"]


def test_summary_numbers_rubrics_and_checks_weights() -> None:
    rubrics = ",".join(
        f'{{"id": "x{i}", "name": "R{i}", "description": "d", "scoring_criteria": "c",'
        f' "weight": {w}}}'
        for i, w in enumerate(["2.0", "0", '"heavy"', "1", "0.5"])
    )
    answer = (
        "Here you go:\n```json\n"
        f'{{"rubrics": [{rubrics}, {{"name": "broken"}}], "consolidation_notes": "Merged."}}'
        "\n```"
    )
    found = parse_summary(answer)
    assert [r["id"] for r in found.rubrics] == [f"rubric_{i:03d}" for i in range(1, 6)]
    assert [r["weight"] for r in found.rubrics] == [2.0, 1.0, 1.0, 1.0, 0.5]
    assert found.consolidation_notes == "Merged."
    assert found.problems == [
        "rubric 2: weight 0 is not above 0: 1.0",
        "rubric 3: weight 'heavy' is not above 0: 1.0",
        "rubric 6: missing description, scoring_criteria",
    ]


def test_summary_without_a_rubrics_object_reads_nothing() -> None:
    assert parse_summary('[{"name": "A"}]').rubrics == []
    few = parse_summary('{"rubrics": [{"name": "A", "description": "d", "scoring_criteria": "c"}]}')
    assert len(few.rubrics) == 1 and few.problems == ["1 rubrics, not 5-10 as asked"]


@pytest.mark.parametrize(
    ("answer", "score", "reason"),
    [
        ("SCORE: 4\nREASONING: The user gave the file and the flag.", 4, None),
        ("**Score:** 2\nREASONING: Vague.", 2, None),
        ('{"score": 5, "reasoning": "Precise."}', 5, None),
        ("SCORE: 0\nREASONING: Nothing.", None, "score 0 is outside 1-5"),
        ("SCORE: 7\nREASONING: Great.", None, "score 7 is outside 1-5"),
        ("SCORE: 11", None, "score 11 is outside 0-10"),
        ("SCORE: 3.5\nREASONING: Between.", None, "score 3.5 is not a whole number"),
        ("SCORE: four", None, "score is not a number: 'four'"),
        ("SCORE: 3-4", None, None),
        ("The user did well, I'd say 4.", None, "no score found"),
        ("", None, "empty judge output"),
    ],
)
def test_judge_scores_are_read_strictly(answer: str, score: int | None, reason: str | None) -> None:
    parsed = parse_rubric_score(answer)
    assert parsed.score == score
    if score is None:
        assert parsed.unscored_reason
        if reason is not None:
            assert parsed.unscored_reason.startswith(reason)
    else:
        assert parsed.unscored_reason is None and parsed.reasoning


def test_reasoning_follows_the_seed_pattern() -> None:
    parsed = parse_rubric_score("SCORE: 3\nREASONING: Clear goal, but no edge cases.")
    assert parsed.reasoning == "Clear goal, but no edge cases."


def test_weighted_score_uses_scored_rubrics_only() -> None:
    rubrics = [{"id": "a", "weight": 2.0}, {"id": "b", "weight": 1.0}, {"id": "c", "weight": 1.0}]
    scores = [
        {"rubric_id": "a", "score": 5},
        {"rubric_id": "b", "score": 2},
        {"rubric_id": "c", "score": None},
    ]
    assert weighted_score(scores, rubrics) == 4.0
    assert weighted_score([{"rubric_id": "a", "score": None}], rubrics) is None


def test_extractor_variant_follows_the_score_name() -> None:
    assert extractor_prompt_name("excellence") == "rubric_extractor_excellence"
    assert extractor_prompt_name("token_efficiency") == "rubric_extractor_token_efficiency"
    assert extractor_prompt_name("user_turn_efficiency") == (
        "rubric_extractor_user_turn_efficiency"
    )
    assert extractor_prompt_name("task_excellence") == "rubric_extractor_excellence"
    assert extractor_prompt_name("default") == extractor_prompt_name("other") == "rubric_extractor"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("export OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234", "export OPENAI_API_KEY=***"),
        ("curl -H 'Authorization: Bearer abc.def.ghi12345'", "curl -H 'Authorization: Bearer ***'"),
        ("token ghp_0123456789abcdefghijABCDEFGHIJ used", "token *** used"),
        ("aws AKIAABCDEFGHIJKLMNOP", "aws ***"),
        ('{"password": "hunter2hunter2"}', '{"password": "***"}'),
        ("postgresql://me:pw@db/x", "postgresql://me:***@db/x"),
        ("max_tokens=256 and a token count of 12", "max_tokens=256 and a token count of 12"),
        ("API_KEY=$OPENAI_API_KEY", "API_KEY=$OPENAI_API_KEY"),
    ],
)
def test_secrets_in_session_text_are_redacted(text: str, expected: str) -> None:
    assert redact_text(text) == expected
    assert redact_text(expected) == expected
