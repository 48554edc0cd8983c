"""The criteria judge's prompt: template file, rendering, truncation, retry note."""

from __future__ import annotations

import json

import pytest

from qualspec.judges import (
    JUDGE_PROMPT_NAME,
    JUDGE_SCHEMA,
    build_judge_messages,
    judge_prompt_text,
    parse_judgment,
    truncate_text,
)
from qualspec.prompts import load_template, render_template


def test_template_is_packaged_and_versionable() -> None:
    text = judge_prompt_text()
    assert text == load_template(JUDGE_PROMPT_NAME)
    assert "[system]" in text and "[user]" in text
    for placeholder in ("{{ criterion }}", "{{ prompt }}", "{{ response }}"):
        assert placeholder in text


def test_unknown_or_bad_template_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no prompt template named 'nope'"):
        load_template("nope")
    with pytest.raises(ValueError, match="bad template name"):
        load_template("../judge_criteria")


def test_messages_contain_criterion_prompt_and_response() -> None:
    system, user = build_judge_messages(
        criterion="Cites its sources",
        prompt="What causes tides?",
        response="The Moon's gravity, mostly.",
    )
    assert (system.role, user.role) == ("system", "user")
    assert "Cites its sources" in user.content
    assert "What causes tides?" in user.content
    assert "The Moon's gravity, mostly." in user.content
    assert "{{" not in system.content + user.content
    assert "Background" not in user.content
    for text in ("0", "10", '"score"', '"reasoning"', "SCORE: <n>", "ONE criterion"):
        assert text in system.content


def test_response_is_truncated_with_a_marker() -> None:
    response = "A" * 3000 + "B" * 3000
    _, user = build_judge_messages(
        criterion="c", prompt="p", response=response, max_response_chars=3000
    )
    assert "A" * 3000 in user.content
    assert "B" not in user.content
    assert "response truncated: 3000 more characters not shown" in user.content
    _, default = build_judge_messages(criterion="c", prompt="p", response="x" * 10_000)
    assert "x" * 4000 in default.content and "x" * 4001 not in default.content


def test_whole_prompt_fits_the_embedded_judge_window() -> None:
    messages = build_judge_messages(
        criterion="Is accurate " * 5,
        prompt="q" * 20_000,
        response="r" * 20_000,
        context="c" * 20_000,
    )
    total = sum(len(m.content) for m in messages)
    # ~4 characters per token: well under 2048 tokens with room for a 256-token answer.
    assert total < 7_000


def test_context_and_retry_note_are_included() -> None:
    _, user = build_judge_messages(
        criterion="c",
        prompt="p",
        response="r",
        context="The correct answer is 42.",
        retry_note="Your previous answer could not be read: no score found.",
    )
    assert "The correct answer is 42." in user.content
    assert user.content.rstrip().endswith("Your previous answer could not be read: no score found.")


def test_placeholders_inside_inserted_text_are_not_rendered() -> None:
    _, user = build_judge_messages(
        criterion="Honest", prompt="Say {{ criterion }}", response="{{ prompt }} {{ response }}"
    )
    assert "Say {{ criterion }}" in user.content
    assert "{{ prompt }} {{ response }}" in user.content


def test_render_template_single_pass() -> None:
    rendered = render_template("{{a}}-{{ b }}-{{ c }}", {"a": "{{ b }}", "b": "B"})
    assert rendered == "{{ b }}-B-{{ c }}"


def test_truncate_text() -> None:
    assert truncate_text("short", 10) == "short"
    assert truncate_text("abcdef", 3, what="prompt").startswith("abc\n[... prompt truncated: 3")


def test_schema_shape_and_that_parsing_accepts_schema_conforming_output() -> None:
    assert JUDGE_SCHEMA["type"] == "object"
    assert set(JUDGE_SCHEMA["required"]) == {"score", "reasoning"}
    score = JUDGE_SCHEMA["properties"]["score"]
    assert (score["type"], score["minimum"], score["maximum"]) == ("integer", 0, 10)
    assert JUDGE_SCHEMA["properties"]["reasoning"]["type"] == "string"
    json.dumps(JUDGE_SCHEMA)  # serializable for provider requests
    for value in range(11):
        doc = {"score": value, "reasoning": "r"}
        assert parse_judgment(json.dumps(doc), doc).score == float(value)
