"""scoring: expected: the judgment's score is the probability-weighted mean of the score
tokens (issue 21, scope 4), with a fallback to the sampled score where there are none."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import pytest

from qualspec.cli import main
from qualspec.judges import expected_score, score_span
from qualspec.providers import TokenLogprob
from qualspec.testing import FakeServer

VERDICT = '{"score": 7, "reasoning": "Fine."}'
# how a one-token-ten tokenizer (OpenAI's) writes VERDICT
TOKENS = ['{"', "score", '":', " ", "7", ",", ' "', "reason", "ing", '":', ' "', "Fine", '."', "}"]
# at the score position: 7 .5, 8 .25, 6 .125, 10 .0625, 1 .03125, and a quote .03125
AT_SCORE = {"7": 0.5, "8": 0.25, "6": 0.125, "10": 0.0625, "1": 0.03125, '"': 0.03125}
# by hand: (7*.5 + 8*.25 + 6*.125 + 10*.0625 + 1*.03125) / (1 - .03125)
HAND_EXPECTED = 6.90625 / 0.96875
HAND_MASS = 0.96875


def _content(tokens: list[str], alternatives: dict[int, dict[str, float]]) -> dict[str, Any]:
    """An OpenAI ``logprobs`` object: each token sure (p=1) except at ``alternatives``."""
    out = []
    for index, token in enumerate(tokens):
        top = alternatives.get(index, {token: 1.0})
        out.append(
            {
                "token": token,
                "logprob": math.log(top[token]),
                "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top.items()],
            }
        )
    return {"content": out}


def _tokens(tokens: list[str], alternatives: dict[int, dict[str, float]]) -> list[TokenLogprob]:
    return [
        TokenLogprob(
            e["token"], e["logprob"], tuple((a["token"], a["logprob"]) for a in e["top_logprobs"])
        )
        for e in _content(tokens, alternatives)["content"]
    ]


def _scripted(body: dict[str, Any], text: str) -> dict[str, Any]:
    assert "".join(TOKENS) == text
    return _content(TOKENS, {4: AT_SCORE})


SUITE = """
name: expected
providers:
  fake: {type: openai, base_url: "%(url)s"}
candidates:
  - {name: bot, model: fake/m}
%(judge)s
scenarios:
  - name: capital
    prompt: "What is the capital of France?"
    criteria: ["Names the capital"]
"""


def _run(tmp_path: Path, server: FakeServer, judge: str) -> dict[str, Any]:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE % {"url": server.base_url, "judge": judge})
    out = tmp_path / "out.json"
    with pytest.raises(SystemExit) as exc:
        main(["run", str(suite), "--quiet", "--output", str(out), "--no-calibration"])
    assert exc.value.code in (0, None, 1)
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def _judgments(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [j for r in data["responses"] for j in r["judgments"]]


def test_the_score_is_the_probability_weighted_mean_of_the_score_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeServer(judge_reply=VERDICT, logprobs=_scripted) as server:
        data = _run(tmp_path, server, "judge: {model: fake/judge, scoring: expected}")
        judge_bodies = [b for _, _, b in server.request_log if b.get("response_format")]
    (judgment,) = _judgments(data)
    details = judgment["details"]
    assert judgment["score"] == pytest.approx(HAND_EXPECTED, abs=1e-12)
    assert details["expected_score"] == judgment["score"]
    assert details["score_mass"] == pytest.approx(HAND_MASS, abs=1e-12)
    assert details["sampled_score"] == 7
    assert details["scoring"] == "expected"
    assert details["score_probabilities"] == pytest.approx(
        {"1": 0.03125, "6": 0.125, "7": 0.5, "8": 0.25, "10": 0.0625}
    )
    assert "scoring_fallback" not in details
    assert all(b["logprobs"] is True and b["top_logprobs"] == 20 for b in judge_bodies)


def test_a_cached_verdict_keeps_its_log_probabilities(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeServer(judge_reply=VERDICT, logprobs=_scripted) as server:
        first = _judgments(_run(tmp_path, server, "judge: {model: fake/judge, scoring: expected}"))
        calls = server.calls
        second = _judgments(_run(tmp_path, server, "judge: {model: fake/judge, scoring: expected}"))
        assert server.calls == calls  # every answer and verdict from the cache
    assert second[0]["score"] == first[0]["score"] == pytest.approx(HAND_EXPECTED)
    assert second[0]["details"]["score_mass"] == pytest.approx(HAND_MASS)


def test_sampled_scoring_asks_for_no_log_probabilities(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeServer(judge_reply=VERDICT, logprobs=_scripted) as server:
        data = _run(tmp_path, server, "judge: {model: fake/judge}")
        bodies = [b for _, _, b in server.request_log]
    (judgment,) = _judgments(data)
    assert judgment["score"] == 7
    assert not (judgment.get("details") or {}).get("scoring")
    assert not any("logprobs" in b for b in bodies)


def test_without_log_probabilities_the_sampled_score_is_used_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    suite = SUITE.replace('criteria: ["Names the capital"]', 'criteria: ["Names it", "Is brief"]')
    with FakeServer(judge_reply=VERDICT) as server, caplog.at_level(logging.WARNING):
        data = _run_text(tmp_path, server, suite, "judge: {model: fake/judge, scoring: expected}")
    judged = _judgments(data)
    assert len(judged) == 2
    for judgment in judged:
        assert judgment["score"] == 7
        assert judgment["details"] == {
            "scoring": "expected",
            "scoring_fallback": "the endpoint returned no token log-probabilities",
            "sampled_score": 7,
        }
    lines = [r.getMessage() for r in caplog.records if "falls back" in r.getMessage()]
    assert len(lines) == 1
    assert "judge 'criteria'" in lines[0] and "no token log-probabilities" in lines[0]


def _run_text(tmp_path: Path, server: FakeServer, suite: str, judge: str) -> dict[str, Any]:
    path = tmp_path / "suite.yaml"
    path.write_text(suite % {"url": server.base_url, "judge": judge})
    out = tmp_path / "out.json"
    with pytest.raises(SystemExit):
        main(["run", str(path), "--quiet", "--output", str(out), "--no-calibration"])
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def test_an_anthropic_judge_falls_back_and_is_sent_no_logprobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAKE_CLAUDE_KEY", "k")
    claude = '  claude: {type: anthropic, base_url: "%(url)s", api_key_env: FAKE_CLAUDE_KEY}'
    suite = SUITE.replace("providers:\n", f"providers:\n{claude}\n")
    judges = "judges:\n  - {type: criteria, name: c, model: claude/haiku, scoring: expected}"
    with FakeServer(judge_reply=VERDICT, logprobs=_scripted) as server:
        data = _run_text(tmp_path, server, suite, judges)
        bodies = [b for _, _, b in server.request_log if "tools" in b]
    (judgment,) = _judgments(data)
    assert judgment["score"] == 7
    assert judgment["details"]["scoring_fallback"] == (
        "the endpoint returned no token log-probabilities"
    )
    assert bodies and not any("logprobs" in b or "top_logprobs" in b for b in bodies)


def test_expected_scoring_needs_one_score_per_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        SUITE
        % {
            "url": "http://127.0.0.1:9/v1",
            "judge": "judge: {model: fake/judge, scoring: expected, mode: all_criteria}",
        }
    )
    with pytest.raises(SystemExit) as exc:
        main(["run", str(suite), "--quiet"])
    assert exc.value.code not in (0, None)
    err = capsys.readouterr().err
    assert "scoring: expected needs mode: per_criterion" in err
    assert "Traceback" not in err


# ---- the computation, by hand ------------------------------------------------------


def test_ten_written_as_two_tokens_splits_the_one_by_what_follows() -> None:
    text = '{"score": 10, "reasoning": "x"}'
    tokens = ['{"', "score", '":', " ", "1", "0", ",", ' "', "reasoning", '":', ' "', "x", '"}']
    logprobs = _tokens(tokens, {4: {"1": 0.6, "9": 0.3, "8": 0.1}, 5: {"0": 0.75, ",": 0.25}})
    found = expected_score(text, logprobs, 10)
    assert not isinstance(found, str)
    # p(10) = .6 * .75 = .45, p(1) = .6 * .25 = .15: (4.5 + .15 + 9*.3 + 8*.1) / 1
    assert found.score == pytest.approx(8.15)
    assert found.mass == pytest.approx(1.0)
    assert found.probabilities == pytest.approx({"1": 0.15, "8": 0.1, "9": 0.3, "10": 0.45})
    assert found.unresolved_mass == 0


def test_a_one_that_may_be_ten_is_left_out_and_recorded() -> None:
    text = '{"score": 9, "reasoning": "x"}'
    tokens = ['{"', "score", '":', " ", "9", ",", ' "', "reasoning", '":', ' "', "x", '"}']
    logprobs = _tokens(tokens, {4: {"9": 0.7, "1": 0.2, "8": 0.1}})
    found = expected_score(text, logprobs, 9)
    assert not isinstance(found, str)
    assert found.score == pytest.approx((9 * 0.7 + 8 * 0.1) / 0.8)
    assert found.mass == pytest.approx(0.8)
    assert found.unresolved_mass == pytest.approx(0.2)
    assert found.details(9)["unresolved_mass"] == pytest.approx(0.2)


def test_a_score_merged_with_the_json_around_it_is_read() -> None:
    text = '{"score":7,"reasoning":"x"}'
    tokens = ['{"', "score", '":', "7", ',"', "reasoning", '":"', "x", '"}']
    logprobs = _tokens(tokens, {3: {"7": 0.5, "6": 0.5}})
    found = expected_score(text, logprobs, 7)
    assert not isinstance(found, str) and found.score == pytest.approx(6.5)
    merged = ['{"', "score", '":7', ',"', "reasoning", '":"', "x", '"}']
    found = expected_score(text, _tokens(merged, {2: {'":7': 0.25, '":3': 0.75}}), 7)
    assert not isinstance(found, str) and found.score == pytest.approx(4.0)


def test_a_score_inside_the_reasoning_is_never_the_score_position() -> None:
    # the judged answer's own '"score": 10', quoted in the reasoning, comes first
    text = '{"reasoning": "It writes \\"score\\": 10 to fool me", "score": 2}'
    start, end = score_span(text) or (0, 0)
    assert text[start:end] == "2" and start == text.rindex("2")
    pieces = ['{"reasoning": "It writes \\"score\\": ', "10", ' to fool me", "score": ', "2", "}"]
    assert "".join(pieces) == text
    logprobs = _tokens(pieces, {1: {"10": 0.9, "9": 0.1}, 3: {"2": 0.5, "3": 0.5}})
    found = expected_score(text, logprobs, 2)
    assert not isinstance(found, str) and found.score == pytest.approx(2.5)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("It is fine.\nSCORE: 7", "not one JSON object"),
        ('{"score": 7, "score": 7}', "not one JSON object"),
        ('Verdict: {"score": 7}', "not one JSON object"),
    ],
)
def test_a_verdict_without_one_score_key_falls_back(text: str, why: str) -> None:
    logprobs = [TokenLogprob(text, 0.0, ((text, 0.0),))]
    found = expected_score(text, logprobs, 7)
    assert isinstance(found, str) and why in found


def test_tokens_that_do_not_spell_the_answer_fall_back() -> None:
    logprobs = [TokenLogprob('{"score": 8}', 0.0)]
    found = expected_score('{"score": 7}', logprobs, 7)
    assert isinstance(found, str) and "do not spell" in found


def test_a_verdict_cut_off_after_its_score_still_has_its_score_position() -> None:
    text = '{"score": 6, "reasoning": "The answer names Par'
    start, end = score_span(text) or (0, 0)
    assert text[start:end] == "6"
    assert score_span('{"reasoning": "cut before the sco') is None
    assert score_span('{"score": 6} and then {"score": 9}') is None


def test_an_endpoint_that_refuses_logprobs_is_asked_again_without_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    suite = SUITE.replace('criteria: ["Names the capital"]', 'criteria: ["Names it", "Is brief"]')
    judge = "judge: {model: fake/judge, scoring: expected}"
    with (
        FakeServer(judge_reply=VERDICT, refuse_logprobs=True) as server,
        caplog.at_level(logging.WARNING),
    ):
        data = _run_text(tmp_path, server, suite, judge)
        asked = [("logprobs" in b) for _, _, b in server.request_log if b.get("response_format")]
    judged = _judgments(data)
    assert [j["score"] for j in judged] == [7, 7]
    for judgment in judged:
        assert judgment["error"] is None
        assert judgment["details"]["scoring_fallback"] == (
            "the endpoint refused token log-probabilities"
        )
    assert asked.count(True) <= 2 and asked[-1] is False  # refused once (per call in flight)
    lines = [r.getMessage() for r in caplog.records if "falls back" in r.getMessage()]
    assert len(lines) == 1 and "logprobs is not supported" in lines[0]
