"""Comparisons end to end on the fake server: groups, neutral labels, the recorded shuffled
order, debias, re-asks, resume, the console block and the results file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from compare_helpers import (
    ANSWERS,
    CANDIDATES,
    ROLES,
    answer_by_model,
    by_content,
    comparison_requests,
    records,
    run_suite,
    shown,
    user_text,
)

from qualspec.judges import comparison_order, comparison_records, comparison_seed
from qualspec.report import run_from_dict
from qualspec.testing import FakeServer

BOTH = """  - {compare: candidates, within: roles}
  - {compare: roles, within: candidates}"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _texts(data: dict[str, Any]) -> dict[str, str]:
    return {r["key"]: r["text"] for r in data["responses"]}


def _names(data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {r["key"]: (r["candidate"], r["role"]) for r in data["responses"]}


def test_groups_in_both_directions_are_judged_once_each(tmp_path: Path) -> None:
    with FakeServer(answer=answer_by_model, judge_reply=by_content) as server:
        code, data = run_suite(tmp_path, server, BOTH, temps="[0.0, 0.7]")
        requests = comparison_requests(server)
    assert code == 0
    found = records(data)
    names = _names(data)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for j in found:
        by_name.setdefault(j["evaluator"], []).append(j)
    # 2 roles x 2 temperatures groups of the 2 candidates; 2 candidates x 2 temperatures of roles
    across = by_name["compare_candidates_within_roles"]
    assert len(across) == 4
    for j in across:
        members = [names[k] for k in j["subject"]]
        assert sorted(c for c, _ in members) == sorted(CANDIDATES)
        assert len({r for _, r in members}) == 1
        assert j["details"]["group"] == {"role": members[0][1]}
        assert j["details"]["members"] == {k: names[k][0] for k in j["subject"]}
    inside = by_name["compare_roles_within_candidates"]
    assert len(inside) == 4
    for j in inside:
        members = [names[k] for k in j["subject"]]
        assert sorted(r for _, r in members) == sorted(ROLES)
        assert j["details"]["group"] == {"candidate": members[0][0]}
        assert j["details"]["members"] == {k: names[k][1] for k in j["subject"]}
    assert len(requests) == 8  # one call per group
    # the fair judge prefers the fuller answer wherever it is shown
    north = next(k for k in across[0]["subject"] if names[k][0] == "cand_north")
    for j in across:
        winner = j["details"]["winner"]
        assert names[winner][0] == "cand_north"
        assert j["scores"][winner] == 10 and j["score"] is None and j["threshold"] is None
        assert set(j["scores"]) == set(j["subject"])
        assert j["criterion"] == "comparison" and j["reasoning"] == "The longer one."
    assert north in across[0]["scores"]
    for j in inside:  # one candidate gives the same answer to both roles: a tie
        assert j["details"]["winner"] == "tie"
    # the run's totals keep comparisons apart from the judgments
    assert data["summary"]["counts"]["judgments"] == 8
    assert data["summary"]["counts"]["comparisons"] == 8
    summary = {s["name"]: s for s in data["summary"]["comparisons"]}
    assert summary["compare_candidates_within_roles"]["wins"] == {"cand_north": 4, "cand_south": 0}
    assert summary["compare_candidates_within_roles"]["wins_by_group"] == {
        "role_novice": {"cand_north": 2, "cand_south": 0},
        "role_expert": {"cand_north": 2, "cand_south": 0},
    }
    assert summary["compare_roles_within_candidates"]["ties"] == 4


def test_the_judge_sees_neutral_labels_and_no_names(tmp_path: Path) -> None:
    with FakeServer(answer=answer_by_model, judge_reply=by_content) as server:
        code, data = run_suite(tmp_path, server, BOTH)
        requests = comparison_requests(server)
    assert code == 0 and requests
    for body in requests:
        sent = json.dumps(body["messages"])
        for name in [*CANDIDATES, *ROLES, *CANDIDATES.values()]:
            assert name not in sent, name
        assert [label for label, _ in shown(body)] == ["A", "B"]
    # comparing roles: the personas' preambles would tell the answers apart, so only the
    # question is shown; comparing candidates within a role, the shared persona is shown
    personas = [sum(p in user_text(b) for p in ROLES.values()) for b in requests]
    assert sorted(personas) == [0, 0, 1, 1]


def test_the_order_is_shuffled_recorded_and_reproducible_from_the_seed(tmp_path: Path) -> None:
    with FakeServer(answer=answer_by_model, judge_reply=by_content) as server:
        code, data = run_suite(tmp_path, server, BOTH, temps="[0.0, 0.5, 1.0, 1.5]")
        requests = comparison_requests(server)
    assert code == 0
    texts = _texts(data)
    found = records(data)
    assert len(found) == 16
    shown_orders = {tuple(text for _, text in shown(body)) for body in requests}
    for j in found:
        details = j["details"]
        order = details["order"]
        assert details["seed"] == comparison_seed(j["response_key"])
        assert comparison_order(j["subject"], details["seed"]) == order
        assert details["labels"] == dict(zip(["A", "B"], order, strict=True))
        # the judge was shown the answers in the recorded order
        assert tuple(texts[k] for k in order) in shown_orders
    # shuffled: the recorded orders are not all the keys' sorted order
    assert any(j["details"]["order"] != sorted(j["subject"]) for j in found)


def test_debias_judges_the_reversed_order_too_and_averages(tmp_path: Path) -> None:
    # the default fake judge always prefers the answer shown first: the orders disagree
    with FakeServer(answer=answer_by_model) as server:
        code, data = run_suite(
            tmp_path, server, "  - {compare: candidates, within: roles, debias: true}"
        )
        requests = comparison_requests(server)
    assert code == 0
    texts = _texts(data)
    found = records(data)
    assert len(found) == 2 and len(requests) == 4  # two calls per group
    shown_orders = [tuple(text for _, text in shown(body)) for body in requests]
    for j in found:
        details = j["details"]
        debias = details["debias"]
        assert debias["reversed_order"] == details["order"][::-1]
        first, second = details["order"]
        assert (texts[first], texts[second]) in shown_orders
        assert (texts[second], texts[first]) in shown_orders
        assert debias["reversed_scores"] == {first: 6.0, second: 8.0}
        assert debias["reversed_winner"] == second
        assert debias["disagreed"] is True
        assert j["scores"] == {first: 7.0, second: 7.0}  # (8 + 6) / 2 each
        assert details["winner"] == "tie"
    (summary,) = data["summary"]["comparisons"]
    assert (summary["debiased"], summary["disagreed"], summary["disagreement_rate"]) == (2, 2, 1.0)


def test_debias_with_a_fair_judge_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer(answer=answer_by_model, judge_reply=by_content) as server:
        code, data = run_suite(
            tmp_path, server, "  - {compare: candidates, within: roles, debias: true}"
        )
    assert code == 0
    names = _names(data)
    for j in records(data):
        assert j["details"]["debias"]["disagreed"] is False
        assert names[j["details"]["winner"]][0] == "cand_north"
    out = capsys.readouterr().out
    assert "orders disagreed in 0 of 2 groups" in out


def test_a_bad_verdict_is_asked_again_then_unscored_with_its_text(tmp_path: Path) -> None:
    bad = '{"scores": {"A": 9, "Z": 2}, "winner": "A", "reasoning": "A."}'

    def judge(body: dict[str, Any]) -> str:
        return bad if shown(body) else '{"score": 8, "reasoning": "ok"}'

    with FakeServer(answer=answer_by_model, judge_reply=judge) as server:
        code, data = run_suite(tmp_path, server, "  - {compare: candidates, within: roles}")
        requests = comparison_requests(server)
    assert code == 0
    found = records(data)
    assert len(found) == 2
    assert len(requests) == 6  # the first ask and two re-asks per group
    assert any("could not be read (unknown label Z)" in user_text(b) for b in requests)
    for j in found:
        assert j["scores"] is None and j["score"] is None
        assert "unknown label Z" in j["unscored_reason"]
        assert j["raw_text"] == bad and j["details"]["winner"] is None
        assert j["attempts"] >= 3
    (summary,) = data["summary"]["comparisons"]
    assert summary["unscored"] == 2 and summary["wins"] == {}


def test_a_verdict_read_on_the_re_ask_is_kept(tmp_path: Path) -> None:
    asked: list[int] = []

    def judge(body: dict[str, Any]) -> str:
        if not shown(body):
            return '{"score": 8, "reasoning": "ok"}'
        asked.append(1)
        if "could not be read" not in user_text(body):
            return '{"scores": {"A": 12, "B": 3}, "winner": "A"}'
        return by_content(body)

    with FakeServer(answer=answer_by_model, judge_reply=judge) as server:
        code, data = run_suite(tmp_path, server, "  - {compare: candidates, within: roles}")
    assert code == 0
    assert len(asked) == 4
    for j in records(data):
        assert j["unscored_reason"] is None and max(j["scores"].values()) == 10


def test_resume_does_not_redo_finished_comparisons(tmp_path: Path) -> None:
    with FakeServer(answer=answer_by_model, judge_reply=by_content) as server:
        # answers only, then a resume that judges and compares, then one that has nothing left
        code, first = run_suite(tmp_path, server, BOTH, "--no-judge", name="a.json")
        assert code == 0 and records(first) == []
        answered = server.calls
        assert answered == 4
        run_id = first["run"]["id"]
        code, second = run_suite(tmp_path, server, BOTH, "--resume", run_id, name="b.json")
        assert code == 0
        made = server.calls - answered
        assert made == 4 + 4  # 4 criteria judgments, 2 + 2 comparisons; no answer again
        assert len(records(second)) == 4
        before = server.calls
        code, third = run_suite(
            tmp_path, server, BOTH, "--resume", run_id, "--no-cache", name="c.json"
        )
        assert code == 0
        assert server.calls == before  # nothing asked again, not even without the cache
    assert sorted((j["response_key"], j["details"]["seed"]) for j in records(third)) == sorted(
        (j["response_key"], j["details"]["seed"]) for j in records(second)
    )
    assert [j["created_at"] for j in records(third)] == [j["created_at"] for j in records(second)]


def test_a_rerun_of_the_unchanged_suite_is_compared_from_the_cache(tmp_path: Path) -> None:
    with FakeServer(answer=answer_by_model, judge_reply=by_content) as server:
        code, first = run_suite(tmp_path, server, BOTH, name="a.json")
        assert code == 0 and len(records(first)) == 4
        asked = len(comparison_requests(server))
        assert asked == 4
        code, second = run_suite(tmp_path, server, BOTH, name="b.json")
        assert code == 0
        assert len(comparison_requests(server)) == asked  # a new run, no new comparison call
    assert second["run"]["id"] != first["run"]["id"]
    again = {j["response_key"]: j for j in records(second)}
    for j in records(first):
        same = again[j["response_key"]]
        assert same["cached"] is True
        assert same["details"]["order"] == j["details"]["order"]
        assert same["scores"] == j["scores"]


def test_the_console_shows_a_comparisons_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer(answer=answer_by_model, judge_reply=by_content) as server:
        code, data = run_suite(tmp_path, server, BOTH, "--verbose")  # each group
    assert code == 0
    out = capsys.readouterr().out
    block = out[out.index("Comparisons:") :]
    assert "compare_candidates_within_roles (candidates within roles)" in block
    assert "role role_novice: winner cand_north  (cand_north 10, cand_south 5)" in block
    assert "role role_expert: winner cand_north" in block
    assert '"The longer one." (A = ' in block
    assert "wins: cand_north 2, cand_south 0 (of 2 judged)" in block
    assert "compare_roles_within_candidates (roles within candidates)" in block
    assert "candidate cand_north: winner tie" in block
    assert "Comparisons: 4 groups judged side by side" in out
    # the stored run reads back with its comparison records
    run = run_from_dict(data, source="out.json")
    assert len(comparison_records(run)) == 4
    assert ANSWERS  # (the answers differ by model)


def test_a_comparison_with_one_role_left_is_skipped_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer(answer=answer_by_model, judge_reply=by_content) as server:
        code, data = run_suite(tmp_path, server, BOTH, "--roles", "role_expert")
        requests = comparison_requests(server)
    assert code == 0
    assert len(requests) == 1  # only the candidates of the one role
    assert {j["evaluator"] for j in records(data)} == {"compare_candidates_within_roles"}
    summary = {s["name"]: s for s in data["summary"]["comparisons"]}
    assert summary["compare_roles_within_candidates"]["skipped"] == 2
    assert summary["compare_roles_within_candidates"]["groups"] == 0
    out = capsys.readouterr().out
    assert "2 group(s) of fewer than 2 answers skipped" in out


def test_the_dry_run_counts_comparison_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    comparisons = """  - {compare: candidates, within: roles}
  - {compare: roles, within: candidates, debias: true, name: suppression}"""
    with FakeServer() as server:
        suite = tmp_path / "suite.yaml"
        from compare_helpers import SUITE

        suite.write_text(
            SUITE % {"url": server.base_url, "temps": "[0.0, 0.7]", "comparisons": comparisons}
        )
        from qualspec.cli import main

        with pytest.raises(SystemExit) as exc:
            main(["run", str(suite), "--dry-run"])
        assert exc.value.code == 0
        assert server.calls == 0
    out = capsys.readouterr().out
    assert "Judge calls: 8 (before parse retries)" in out
    assert "Comparison calls: 4 (compare_candidates_within_roles: 4 groups)" in out
    assert "Comparison calls: 8 (suppression: 4 groups)" in out
    assert "suppression (roles within candidates, fake/judge, debias)" in out


def test_a_group_left_with_one_answer_is_recorded_unscored_not_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def answer(body: dict[str, Any]) -> str:
        if body["model"] == "model-sx2":
            raise RuntimeError("this model is down")  # the server answers HTTP 500
        return answer_by_model(body)

    with FakeServer(answer=answer, judge_reply=by_content) as server:
        code, data = run_suite(
            tmp_path, server, "  - {compare: candidates, within: roles}", "--retries", "0", "-v"
        )
        requests = comparison_requests(server)
    assert code == 0
    assert requests == []  # nothing to compare: no judge call
    found = records(data)
    assert len(found) == 2
    for j in found:
        assert j["scores"] is None and j["error"] is None
        assert "fewer than two answers" in j["unscored_reason"]
        assert len(j["subject"]) == 1
    out = capsys.readouterr().out
    assert "unscored (fewer than two answers to compare" in out
