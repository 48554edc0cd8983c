"""The comparative judge's parts: groups, labels, the seeded order, the strict verdict reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qualspec.engine import WorkItem, expand
from qualspec.judges import (
    ComparativeJudge,
    build_comparison_messages,
    comparison_labels,
    comparison_order,
    comparison_schema,
    comparison_seed,
    read_comparison,
)
from qualspec.judges._comparative import shared_view
from qualspec.spec import load_suite

SUITE = """
name: groups
candidates:
  - {name: c1, model: openai/m1}
  - {name: c2, model: openai/m2}
  - {name: c3, model: openai/m3}
roles:
  - {name: r1, preamble: "First persona."}
  - {name: r2, preamble: "Second persona."}
scenarios:
  - {name: s1, prompt: "Question one?", criteria: [good]}
  - name: s2
    prompt: "Question {{ x }}?"
    criteria: [good]
    inputs: [{id: a, x: "A"}, {id: b, x: "B"}]
temperatures: [0.0, 0.7]
runs_per_temperature: 2
"""


def _judge(compare: str, within: str) -> ComparativeJudge:
    return ComparativeJudge(name="c", model="openai/judge", compare=compare, within=within)


def _groups(tmp_path: Path, judge: ComparativeJudge) -> dict[str, list[WorkItem]]:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE)
    plan = expand(load_suite(path))
    groups: dict[str, list[WorkItem]] = {}
    for item in plan.items:
        group = judge.group_of(item)
        assert group is not None
        groups.setdefault(group, []).append(item)
    return groups


def test_candidates_within_roles_group_every_candidate_of_one_cell(tmp_path: Path) -> None:
    groups = _groups(tmp_path, _judge("candidates", "roles"))
    # (1 scenario + 2 inputs) x 2 temperatures x 2 runs x 2 roles
    assert len(groups) == 3 * 2 * 2 * 2
    for members in groups.values():
        assert sorted(i.candidate for i in members) == ["c1", "c2", "c3"]
        for attr in ("scenario", "input_id", "temperature", "run_index", "role"):
            assert len({getattr(i, attr) for i in members}) == 1, attr


def test_roles_within_candidates_group_every_role_of_one_candidate(tmp_path: Path) -> None:
    groups = _groups(tmp_path, _judge("roles", "candidates"))
    assert len(groups) == 3 * 2 * 2 * 3
    for members in groups.values():
        assert sorted(str(i.role) for i in members) == ["r1", "r2"]
        for attr in ("scenario", "input_id", "temperature", "run_index", "candidate"):
            assert len({getattr(i, attr) for i in members}) == 1, attr


def test_a_group_of_one_answer_is_skipped() -> None:
    judge = _judge("roles", "candidates")
    assert judge.aspects([]) == ()
    assert judge.aspects([object()]) == ()  # type: ignore[list-item]
    assert judge.aspects([object(), object()]) == ("comparison",)  # type: ignore[list-item]


def test_the_judge_is_shown_only_what_the_group_shares(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE)
    items = [i for i in expand(load_suite(path)).items if i.scenario == "s1"]
    same_role = [i for i in items if i.role == "r1" and i.temperature == 0 and i.run_index == 0]
    view = shared_view(same_role)
    assert view.prompt.startswith("First persona.") and view.preamble == "First persona."
    one_candidate = [
        i for i in items if i.candidate == "c1" and i.temperature == 0 and i.run_index == 0
    ]
    view = shared_view(one_candidate)  # the personas differ: only the question is shown
    assert view.prompt == "Question one?" and view.preamble is None


def test_labels_are_neutral_letters() -> None:
    assert comparison_labels(2) == ["A", "B"]
    assert comparison_labels(28)[-3:] == ["Z", "A2", "B2"]
    assert len(set(comparison_labels(60))) == 60


def test_the_order_is_shuffled_from_the_seed_and_reproducible() -> None:
    keys = ["k1", "k2", "k3", "k4"]
    orders = {tuple(comparison_order(keys, seed)) for seed in range(40)}
    assert len(orders) > 5  # shuffled, not sorted
    for seed in (0, 7, 2**31 + 5):
        first = comparison_order(keys, seed)
        assert sorted(first) == keys
        # the same seed gives the same order, whatever order the keys come in
        assert comparison_order(list(reversed(keys)), seed) == first
    # the seed of a group is fixed by the run and the group, and differs between them
    assert comparison_seed("gabc") == comparison_seed("gabc")
    assert comparison_seed("gabc") != comparison_seed("gabd")


def test_the_prompt_shows_each_answer_under_its_label_in_order() -> None:
    from qualspec.judges import CandidateView

    system, user = build_comparison_messages(
        view=CandidateView(prompt="Why tides?", context="The moon."),
        answers=[("A", "second answer"), ("B", "first answer")],
        criteria=["explains the cause"],
    )
    text = user.content
    assert text.index("Response A:\n<<<\nsecond answer") < text.index("Response B:\n<<<\nfirst")
    assert '"A": <0-10>, "B": <0-10>' in text and "A, B or tie" in text
    assert "The moon." in text and "1. explains the cause" in text
    assert "neutral label" in system.content
    schema = comparison_schema(["A", "B"])
    assert schema["properties"]["winner"]["enum"] == ["A", "B", "tie"]
    assert schema["properties"]["scores"]["required"] == ["A", "B"]


GOOD = {"scores": {"A": 8, "B": 5}, "winner": "A", "reasoning": "A is complete."}


@pytest.mark.parametrize(
    ("reply", "scores", "winner"),
    [
        (json.dumps(GOOD), {"A": 8.0, "B": 5.0}, "A"),
        ("```json\n" + json.dumps(GOOD) + "\n```", {"A": 8.0, "B": 5.0}, "A"),
        ("Here it is: " + json.dumps(GOOD), {"A": 8.0, "B": 5.0}, "A"),
        ('{"scores": {"A": 8, "B": 5}, "winner": "Response A"}', {"A": 8.0, "B": 5.0}, "A"),
        ('{"scores": {"A": 7, "B": 7}, "winner": "tie"}', {"A": 7.0, "B": 7.0}, "tie"),
        ('{"scores": {"A": 7, "B": 7}, "winner": "B"}', {"A": 7.0, "B": 7.0}, "B"),
        ('{"scores": {"A": 8.0, "B": 0}, "winner": "A"}', {"A": 8.0, "B": 0.0}, "A"),
    ],
)
def test_a_clear_verdict_is_read(reply: str, scores: dict[str, float], winner: str) -> None:
    parsed = read_comparison(reply, None, ["A", "B"])
    assert parsed.unscored_reason is None
    assert parsed.scores == scores and parsed.winner == winner


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("A is better. SCORE: 8", "no JSON object"),
        ('{"scores": {"A": 8}, "winner": "A"}', "no score for label B"),
        ('{"scores": {"A": 8, "B": 5, "C": 9}, "winner": "A"}', "unknown label C"),
        ('{"scores": {"A": 11, "B": 5}, "winner": "A"}', "label A: score 11 is outside 0-10"),
        ('{"scores": {"A": 7.5, "B": 5}, "winner": "A"}', "label A: score 7.5 is not a whole"),
        ('{"scores": {"A": "8-9", "B": 5}, "winner": "A"}', "label A:"),
        ('{"scores": {"A": 8, "B": 5}, "winner": "C"}', "winner 'C' is not one of A, B or tie"),
        ('{"scores": {"A": 8, "B": 5}}', "winner None is not one of"),
        ('{"scores": {"A": 8, "B": 5}, "winner": "B"}', "winner B does not have the highest"),
        ('{"scores": {"A": 8, "B": 5}, "winner": "tie"}', "winner is tie but A alone"),
        ('{"scores": {"A": 8, "B": 5, "A": 2}, "winner": "A"}', "no JSON object"),
        ('{"scores": [8, 5], "winner": "A"}', "scores is not an object"),
    ],
)
def test_a_bad_verdict_is_unscored_never_guessed(reply: str, reason: str) -> None:
    parsed = read_comparison(reply, None, ["A", "B"])
    assert parsed.scores is None and parsed.winner is None
    assert parsed.unscored_reason is not None and reason in parsed.unscored_reason


def test_the_structured_answer_is_read_first() -> None:
    parsed = read_comparison("not json", {"scores": {"A": 3, "B": 9}, "winner": "B"}, ["A", "B"])
    assert parsed.scores == {"A": 3.0, "B": 9.0} and parsed.winner == "B"


def _record(**details: object) -> dict[str, object]:
    base: dict[str, object] = {
        "type": "comparison",
        "compare": "roles",
        "within": "candidates",
        "scenario": "s",
        "input_id": None,
        "temperature": 0.0,
        "run_index": 0,
        "group": {"candidate": "c1"},
        "members": {"k1": "naive", "k2": "expert"},
        "winner": "k2",
        "seed": 1,
        "order": ["k1", "k2"],
        "labels": {"A": "k1", "B": "k2"},
        "debias": None,
    }
    base.update(details)
    return base


def test_the_summary_counts_wins_ties_disagreements_and_skipped_groups() -> None:
    from datetime import UTC, datetime

    from qualspec.judges import comparison_records, comparison_summary
    from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary

    def judgment(key: str, scores: dict[str, float | None] | None, **details: object) -> object:
        return JudgmentRecord(
            response_key=key,
            criterion="comparison",
            judge_key="j" + key,
            judge_model="openai/judge",
            threshold=None,
            evaluator="by_role",
            subject=["k1", "k2"],
            scores=scores,
            unscored_reason=None if scores else "no score for label B",
            details=_record(**details),
        )

    flipped = {"reversed_order": ["k2", "k1"], "reversed_scores": {}, "reversed_winner": "k1"}
    judgments = [
        judgment("g1", {"k1": 4.0, "k2": 8.0}, debias={**flipped, "disagreed": False}),
        judgment(
            "g2",
            {"k1": 7.0, "k2": 7.0},
            winner="tie",
            group={"candidate": "c2"},
            debias={**flipped, "disagreed": True},
        ),
        judgment("g3", None, winner=None, debias={**flipped, "disagreed": None}),
        JudgmentRecord(  # a criteria judgment: not a comparison
            response_key="k1", criterion="good", judge_key="x", judge_model="m", threshold=7.0
        ),
    ]
    responses = [
        ResponseRecord(
            key=f"r{i}",
            candidate=c,
            role=r,
            scenario="s",
            input_id=None,
            temperature=0.0,
            effective_temperature=0.0,
            run_index=0,
            provider="openai",
            model="m",
            text="t",
        )
        for i, (c, r) in enumerate([("c1", "naive"), ("c1", "expert"), ("c3", "naive")])
    ]
    run = RunRecord(
        summary=RunSummary(
            id="run",
            suite_name="s",
            suite_hash="h",
            status="finished",
            started_at=datetime(2026, 1, 1, tzinfo=UTC),
            finished_at=None,
            metadata={"dimensions": {"roles": ["naive", "expert"], "candidates": ["c2", "c1"]}},
        ),
        responses=responses,
        judgments=judgments,  # type: ignore[arg-type]
    )
    assert [j.response_key for j in comparison_records(run)] == ["g1", "g2", "g3"]
    (summary,) = comparison_summary(run)
    assert (summary.name, summary.compare, summary.within) == ("by_role", "roles", "candidates")
    assert (summary.groups, summary.scored, summary.unscored, summary.errors) == (3, 2, 1, 0)
    assert summary.wins == {"naive": 0, "expert": 1} and summary.ties == 1
    # groups in the suite's order of candidates (c2 before c1)
    assert list(summary.wins_by_group) == ["c2", "c1"]
    assert summary.wins_by_group["c1"] == {"naive": 0, "expert": 1}
    assert summary.mean_scores == {"naive": 5.5, "expert": 7.5}
    assert (summary.debias, summary.debiased, summary.disagreed) == (True, 2, 1)
    assert summary.disagreement_rate == 0.5
    assert summary.skipped == 1  # c3 answered one role only
    assert summary.to_dict()["disagreement_rate"] == 0.5
