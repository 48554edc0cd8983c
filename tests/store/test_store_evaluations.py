"""Evaluation records of any evaluator, responses of any kind, criteria of any length."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from store_factories import judgment, response

from qualspec.store import JudgmentRecord, Store


def _varied(alphabet: str, n: int = 2000, seed: int = 4) -> str:
    """``n`` characters drawn at random: text that compresses badly (as real prose can)."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


_CJK = "".join(chr(c) for c in range(0x4E00, 0x4E00 + 2000))
LONG_CRITERIA = {
    "ascii-repeated": "a" * 2000,
    "ascii-varied": _varied("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;"),
    "e-acute": "é" * 2000,
    "cjk-repeated": "日" * 2000,
    "latin1-varied": _varied("éèêëàâäîïôöùûüçÉÈÀÇœæß"),
    "cjk-varied": _varied(_CJK),  # 6,000 UTF-8 bytes, about as compressible as noise
}


def _group(**overrides: object) -> JudgmentRecord:
    values: dict[str, object] = {
        "response_key": "g-k1-k2",
        "criterion": "which answer is clearer",
        "judge_key": "jg",
        "judge_model": None,
        "threshold": None,
        "score": None,
        "passed": None,
        "evaluator": "pairwise",
        "subject": ["k1", "k2"],
        "scores": {"k1": 7.0, "k2": 3.0},
        "details": {"winner": "k1", "order_seed": 17, "swapped": False, "notes": ["a", None]},
        "created_at": datetime(2026, 1, 2, 3, 4, 7, tzinfo=UTC),
    }
    values.update(overrides)
    return JudgmentRecord(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(LONG_CRITERIA))
def test_long_criterion_is_stored_read_back_and_upserted_idempotently(
    store: Store, name: str
) -> None:
    criterion = LONG_CRITERIA[name]
    assert len(criterion) == 2000
    run_id = store.create_run("suite", "h", {})
    store.record_responses(run_id, [response("k1")])
    store.record_judgments(
        run_id, [judgment("k1", criterion, score=None, passed=None, error="HTTP 500")]
    )
    store.record_judgments(run_id, [judgment("k1", criterion, score=6.0, passed=False)])
    store.record_judgments(run_id, [judgment("k1", criterion, score=1.0, passed=False)])
    store.record_judgments(run_id, [judgment("k1", criterion, score=None, error="late")])
    (only,) = store.load_run(run_id).judgments
    assert only.criterion == criterion
    assert (only.score, only.error, only.evaluator) == (6.0, None, "criteria")
    assert store.judgment_keys(run_id) == {("k1", criterion)}
    assert store.evaluation_keys(run_id) == {("criteria", "k1", criterion)}


def test_long_criteria_sharing_a_long_prefix_are_distinct(store: Store) -> None:
    base = LONG_CRITERIA["cjk-varied"]
    one, two = base + "。", base + "？"
    run_id = store.create_run("suite", "h", {})
    store.record_judgments(run_id, [judgment("k1", one), judgment("k1", two, score=2.0)])
    loaded = {j.criterion: j.score for j in store.load_run(run_id).judgments}
    assert loaded == {one: 8.0, two: 2.0}


def test_long_user_text_in_every_name_column(store: Store) -> None:
    long_name = LONG_CRITERIA["latin1-varied"]
    run_id = store.create_run(long_name, "h", {})
    made = response(
        "k1",
        candidate=long_name,
        role=long_name,
        scenario=long_name,
        input_id=long_name,
        provider=long_name,
        model=long_name,
    )
    store.record_responses(run_id, [made])
    store.record_judgments(run_id, [judgment("k1", "tone", judge_model=long_name)])
    record = store.load_run(run_id)
    assert record.summary.suite_name == long_name
    assert record.responses == [made]
    assert record.judgments[0].judge_model == long_name
    assert store.latest_unfinished_run(long_name) == run_id
    version = store.prompt_version(long_name, "text")
    assert store.get_prompt(long_name, 1).id == version


def test_two_evaluators_on_the_same_response_and_criterion_keep_two_rows(store: Store) -> None:
    run_id = store.create_run("suite", "h", {})
    store.record_responses(run_id, [response("k1")])
    first = judgment("k1", "tone", score=8.0)
    second = judgment("k1", "tone", score=4.0, evaluator="second_opinion", judge_model="other")
    store.record_judgments(run_id, [first, second])
    store.record_judgments(run_id, [first, second])  # idempotent
    loaded = store.load_run(run_id).judgments
    assert [(j.evaluator, j.score) for j in loaded] == [("criteria", 8.0), ("second_opinion", 4.0)]
    assert loaded == [first, second]
    assert store.judgment_keys(run_id) == {("k1", "tone")}
    assert store.evaluation_keys(run_id) == {
        ("criteria", "k1", "tone"),
        ("second_opinion", "k1", "tone"),
    }
    assert store.get_run(run_id).n_judgments == 2


def test_upsert_rule_and_batch_dedupe_are_per_evaluator(store: Store) -> None:
    run_id = store.create_run("suite", "h", {})
    store.record_judgments(
        run_id,
        [
            judgment("k1", "tone", evaluator="a", score=None, passed=None, error="boom"),
            judgment("k1", "tone", evaluator="a", score=5.0),
            judgment("k1", "tone", evaluator="a", score=9.0),  # a success is kept
            judgment("k1", "tone", evaluator="b", score=None, passed=None, error="boom"),
        ],
    )
    assert store.evaluation_keys(run_id) == {("a", "k1", "tone")}
    assert store.judgment_keys(run_id) == set()  # neither is the criteria judge
    store.record_judgments(run_id, [judgment("k1", "tone", evaluator="b", score=2.0)])
    store.record_judgments(run_id, [judgment("k1", "tone", evaluator="a", score=1.0)])
    scores = {j.evaluator: j.score for j in store.load_run(run_id).judgments}
    assert scores == {"a": 5.0, "b": 2.0}


def test_group_record_with_subject_scores_and_details_round_trips(store: Store) -> None:
    run_id = store.create_run("suite", "h", {})
    store.record_responses(run_id, [response("k1"), response("k2", run_index=1)])
    group = _group()
    store.record_judgments(run_id, [judgment("k2", "tone"), group, judgment("k1", "tone")])
    record = store.load_run(run_id)
    # the responses' own records first (in response order), the group's after them
    assert [(j.response_key, j.evaluator) for j in record.judgments] == [
        ("k1", "criteria"),
        ("k2", "criteria"),
        ("g-k1-k2", "pairwise"),
    ]
    loaded = record.judgments[-1]
    assert loaded == group
    assert loaded.subject == ["k1", "k2"]
    assert loaded.scores == {"k1": 7.0, "k2": 3.0}
    assert loaded.details == {
        "winner": "k1",
        "order_seed": 17,
        "swapped": False,
        "notes": ["a", None],
    }
    assert (loaded.judge_model, loaded.threshold) == (None, None)
    summary = store.get_run(run_id)
    # a record with per-subject scores is scored, though it has no single score
    assert (summary.n_judgments, summary.n_unscored) == (3, 0)


def test_records_without_any_score_count_as_unscored(store: Store) -> None:
    run_id = store.create_run("suite", "h", {})
    store.record_judgments(
        run_id,
        [
            _group(scores=None, unscored_reason="no verdict", cost_usd=0.25),
            _group(criterion="other", scores={"k1": None, "k2": None}, cost_usd=0.5),
            judgment("k1", "tone", score=None, passed=None, unscored_reason="no json"),
        ],
    )
    summary = store.get_run(run_id)
    assert (summary.n_judgments, summary.n_unscored) == (3, 2)
    assert summary.judge_cost_usd == pytest.approx(0.75 + 0.002)


def test_defaults_for_records_written_without_the_new_fields(store: Store) -> None:
    run_id = store.create_run("suite", "h", {})
    store.record_responses(run_id, [response("k1")])
    store.record_judgments(run_id, [judgment("k1", "tone")])
    record = store.load_run(run_id)
    assert record.responses[0].kind == "candidate"
    (j,) = record.judgments
    assert (j.evaluator, j.subject, j.scores, j.details) == ("criteria", None, None, None)


def test_response_of_another_kind_round_trips(store: Store) -> None:
    run_id = store.create_run("suite", "h", {})
    adhoc = response("adhoc-1", kind="adhoc", role=None, input_id=None)
    reference = response("ref-1", kind="reference", scenario="z")
    store.record_responses(run_id, [adhoc, reference, response("k1")])
    store.record_responses(run_id, [adhoc])  # idempotent
    loaded = {r.key: r for r in store.load_run(run_id).responses}
    assert loaded["adhoc-1"] == adhoc
    assert loaded["ref-1"] == reference
    assert {k: r.kind for k, r in loaded.items()} == {
        "adhoc-1": "adhoc",
        "ref-1": "reference",
        "k1": "candidate",
    }
    assert store.get_run(run_id).n_responses == 3


def test_records_in_other_container_types_and_without_a_time_are_stored_as_plain_values(
    store: Store,
) -> None:
    # rows are written through one prepared executemany: mappings and sequences of other
    # types still go in as JSON objects and arrays, and a missing time becomes the write's
    from types import MappingProxyType

    run_id = store.create_run("suite", "h", {})
    before = datetime.now(UTC).replace(microsecond=0)
    versions = MappingProxyType({"system_prompt": 3})
    store.record_responses(
        run_id,
        [response("k1", prompt_versions=versions, created_at=None, cached=True, queue_s=0.5)],
    )
    group = _group(
        subject=("k1", "k2"),
        scores=MappingProxyType({"k1": 7.0, "k2": None}),
        details=MappingProxyType({"winner": "k1"}),
        created_at=None,
    )
    store.record_judgments(run_id, [group])
    record = store.load_run(run_id)
    (loaded,) = record.responses
    assert loaded.prompt_versions == {"system_prompt": 3}
    assert (loaded.cached, loaded.queue_s, loaded.superseded) == (True, 0.5, False)
    assert loaded.created_at is not None and loaded.created_at >= before
    (j,) = record.judgments
    assert j.subject == ["k1", "k2"]
    assert j.scores == {"k1": 7.0, "k2": None}
    assert j.details == {"winner": "k1"}
    assert j.created_at is not None and j.created_at >= before
