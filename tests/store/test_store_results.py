"""Runs, responses and judgments: idempotent recording, reads, summaries."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from store_factories import judgment, response

from qualspec.errors import StoreError
from qualspec.store import Store


def test_same_batch_twice_records_each_key_once(store: Store) -> None:
    run_id = store.create_run("suite", "h1", {})
    batch = [response(f"k{i}") for i in range(100)]
    store.record_responses(run_id, batch)
    store.record_responses(run_id, batch)
    judged = [judgment(f"k{i}", c) for i in range(100) for c in ("tone", "accuracy")]
    store.record_judgments(run_id, judged)
    store.record_judgments(run_id, judged)
    record = store.load_run(run_id)
    assert len(record.responses) == 100
    assert len(record.judgments) == 200
    assert store.response_keys(run_id) == {f"k{i}" for i in range(100)}
    assert len(store.judgment_keys(run_id)) == 200


def test_error_then_success_replaces_and_success_is_kept(store: Store) -> None:
    run_id = store.create_run("suite", "h1", {})
    store.record_responses(run_id, [response("a", text=None, error="HTTP 500: boom", attempts=3)])
    assert store.response_keys(run_id) == set()
    assert store.response_keys(run_id, ok_only=False) == {"a"}
    store.record_responses(run_id, [response("a", text="fixed", attempts=1)])
    # a later error must not overwrite the success, a duplicate success changes nothing
    store.record_responses(run_id, [response("a", text=None, error="late error")])
    store.record_responses(run_id, [response("a", text="other text")])
    (only,) = store.load_run(run_id).responses
    assert (only.text, only.error, only.attempts) == ("fixed", None, 1)
    assert store.response_keys(run_id) == {"a"}


def test_error_and_success_in_one_batch(store: Store) -> None:
    run_id = store.create_run("suite", "h1", {})
    store.record_responses(
        run_id,
        [response("a", text=None, error="timeout"), response("a", text="ok"), response("b")],
    )
    store.record_judgments(
        run_id,
        [
            judgment("a", "tone", score=None, passed=None, error="judge failed"),
            judgment("a", "tone", score=9.0),
            judgment("a", "tone", score=1.0),
        ],
    )
    record = store.load_run(run_id)
    assert {r.key: r.text for r in record.responses} == {"a": "ok", "b": "answer b"}
    assert [j.score for j in record.judgments] == [9.0]


def test_judgment_keys_count_unscored_but_not_errors(store: Store) -> None:
    run_id = store.create_run("suite", "h1", {})
    store.record_responses(run_id, [response("a")])
    store.record_judgments(
        run_id,
        [
            judgment("a", "scored"),
            judgment("a", "unscored", score=None, passed=None, unscored_reason="no number"),
            judgment("a", "failed", score=None, passed=None, error="HTTP 503"),
        ],
    )
    assert store.judgment_keys(run_id) == {("a", "scored"), ("a", "unscored")}
    store.record_judgments(run_id, [judgment("a", "failed", score=4.0, passed=False)])
    assert ("a", "failed") in store.judgment_keys(run_id)
    summary = store.get_run(run_id)
    assert (summary.n_judgments, summary.n_unscored, summary.n_errors) == (3, 1, 0)


def test_load_run_round_trip_and_order(store: Store) -> None:
    run_id = store.create_run("suite", "h1", {"argv": ["run", "suite.yaml"]})
    made = [
        response("k5", scenario="b", input_id="x", role=None, run_index=1),
        response("k4", scenario="b", input_id=None, role="z"),
        response("k3", scenario="a", candidate="zz", temperature=1.0),
        response("k2", scenario="a", candidate="zz", temperature=0.0, prompt_versions={"s": 3}),
        response("k1", scenario="a", candidate="aa", text=None, error="boom", cached=False),
        response("k6", scenario="b", input_id="x", role=None, run_index=0, cached=True),
    ]
    store.record_responses(run_id, made)
    judged = [judgment("k3", "tone"), judgment("k3", "accuracy"), judgment("k5", "tone")]
    judged.append(judgment("k2", "tone", score=None, passed=None, unscored_reason="no json"))
    store.record_judgments(run_id, judged)
    record = store.load_run(run_id)
    assert [r.key for r in record.responses] == ["k1", "k2", "k3", "k4", "k6", "k5"]
    by_key = {r.key: r for r in made}
    for loaded in record.responses:
        assert loaded == by_key[loaded.key]
    assert [(j.response_key, j.criterion) for j in record.judgments] == [
        ("k2", "tone"),
        ("k3", "accuracy"),
        ("k3", "tone"),
        ("k5", "tone"),
    ]
    judged_by = {(j.response_key, j.criterion): j for j in judged}
    for loaded_j in record.judgments:
        assert loaded_j == judged_by[(loaded_j.response_key, loaded_j.criterion)]
    assert record.responses[0].created_at is not None
    assert record.responses[0].created_at.tzinfo is not None
    assert record.summary.metadata == {"argv": ["run", "suite.yaml"]}


def test_missing_created_at_is_filled_in_utc(store: Store) -> None:
    run_id = store.create_run("suite", "h1", {})
    before = datetime.now(UTC)
    store.record_responses(run_id, [response("a", created_at=None)])
    (loaded,) = store.load_run(run_id).responses
    assert loaded.created_at is not None and loaded.created_at >= before.replace(microsecond=0)
    assert loaded.created_at.utcoffset() is not None


def test_summary_counts_and_costs(store: Store) -> None:
    run_id = store.create_run("suite", "h1", {})
    store.record_responses(
        run_id,
        [
            response("a", cost_usd=0.5),
            response("b", cost_usd=0.25),
            response("c", cost_usd=9.0, cached=True),
            response("d", text=None, error="x", cost_usd=None),
        ],
    )
    store.record_judgments(run_id, [judgment("a", "t", cost_usd=0.125)])
    summary = store.get_run(run_id)
    assert (summary.n_responses, summary.n_judgments) == (4, 1)
    assert (summary.n_errors, summary.n_cached) == (1, 1)
    assert summary.candidate_cost_usd == pytest.approx(0.75)
    assert summary.judge_cost_usd == pytest.approx(0.125)
    assert summary.cost_usd == pytest.approx(0.875)


def test_runs_by_prefix_list_and_unfinished(store: Store) -> None:
    first = store.create_run("alpha", "h1", {})
    second = store.create_run("alpha", "h1", {})
    other = store.create_run("beta", "h2", {})
    assert len(first) == len("20261122-054501-3f9a1c") and first[8] == "-"
    assert store.get_run(first[:-1]).id == first
    with pytest.raises(StoreError, match="qualspec runs list"):
        store.get_run("19990101-nope")
    with pytest.raises(StoreError, match="several runs"):
        store.get_run("2")
    listed = store.list_runs()
    assert [r.id for r in listed] == [other, second, first]  # newest first
    assert {r.id for r in store.list_runs("alpha")} == {first, second}
    assert len(store.list_runs(limit=1)) == 1
    assert store.latest_unfinished_run("alpha") in {first, second}
    store.finish_run(first, "finished")
    store.finish_run(second, "interrupted")
    assert store.latest_unfinished_run("alpha") == second
    store.finish_run(second, "finished")
    assert store.latest_unfinished_run("alpha") is None
    finished = store.get_run(second)
    assert finished.status == "finished" and finished.finished_at is not None
    assert store.latest_unfinished_run("gamma") is None


def test_metadata_update_merges_and_redacts(store: Store) -> None:
    run_id = store.create_run(
        "suite", "h", {"candidates": {"a": {"api_key": "sk-canary", "max_tokens": 64}}}
    )
    store.update_run_metadata(run_id, {"headers": {"Authorization": "Bearer sk-canary"}, "n": 1})
    meta = store.get_run(run_id).metadata
    assert meta == {
        "candidates": {"a": {"api_key": "***", "max_tokens": 64}},
        "headers": {"Authorization": "***"},
        "n": 1,
    }
    assert "sk-canary" not in repr(store.list_runs())


def test_delete_run_removes_its_rows_only(store: Store) -> None:
    keep = store.create_run("suite", "h", {})
    drop = store.create_run("suite", "h", {})
    for run_id in (keep, drop):
        store.record_responses(run_id, [response("a"), response("b")])
        store.record_judgments(run_id, [judgment("a", "tone")])
    store.delete_run(drop)
    with pytest.raises(StoreError):
        store.get_run(drop)
    assert len(store.load_run(keep).responses) == 2
    assert store.response_keys(drop) == set()


def test_unknown_run_is_a_store_error(store: Store) -> None:
    with pytest.raises(StoreError, match="qualspec runs list"):
        store.record_responses("no-such-run", [response("a")])
    with pytest.raises(StoreError, match="qualspec runs list"):
        store.finish_run("no-such-run", "finished")


def test_writer_thread_and_main_thread_share_a_store(store: Store) -> None:
    run_id = store.create_run("suite", "h", {})
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for batch in range(20):
                store.record_responses(run_id, [response(f"w{batch}-{i}") for i in range(50)])
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    seen = 0
    while thread.is_alive():
        seen = max(seen, store.get_run(run_id).n_responses)
        store.prompt_version("system_prompt", f"text {seen}")
    thread.join()
    assert errors == []
    assert store.get_run(run_id).n_responses == 1000


def test_superseded_rows_are_kept_but_not_loaded_counted_or_in_the_keys(store: Store) -> None:
    run_id = store.create_run("suite", "h1", {})
    store.record_responses(run_id, [response("a"), response("b", cost_usd=0.5)])
    store.record_judgments(
        run_id,
        [
            judgment("a", "tone", judge_model="old/judge", score=9.0),
            judgment("a", "gone", score=9.0),
            judgment("b", "tone", score=9.0),
        ],
    )
    store.supersede(
        run_id,
        ["b", "no-such-key"],
        [("criteria", "a", "tone"), ("criteria", "a", "gone"), ("criteria", "b", "tone")],
    )
    record = store.load_run(run_id)
    assert [r.key for r in record.responses] == ["a"]
    assert record.judgments == []
    assert (record.summary.n_responses, record.summary.n_judgments) == (1, 0)
    assert record.summary.candidate_cost_usd == pytest.approx(0.001)
    assert store.response_keys(run_id) == {"a"}
    assert store.evaluation_keys(run_id) == set() and store.judgment_keys(run_id) == set()

    # the same key again (another judge on the same answer and criterion): a new
    # current row beside the superseded one, and the upsert rule holds among current rows
    store.record_judgments(run_id, [judgment("a", "tone", judge_model="new/judge", error="x")])
    store.record_judgments(run_id, [judgment("a", "tone", judge_model="new/judge", score=3.0)])
    store.record_judgments(run_id, [judgment("a", "tone", judge_model="late/judge", score=1.0)])
    store.record_responses(run_id, [response("b", text="again")])
    record = store.load_run(run_id)
    assert [(j.judge_model, j.score) for j in record.judgments] == [("new/judge", 3.0)]
    assert {r.key: r.text for r in record.responses} == {"a": "answer a", "b": "again"}
    assert (record.summary.n_responses, record.summary.n_judgments) == (2, 1)
    assert store.evaluation_keys(run_id) == {("criteria", "a", "tone")}

    everything = store.load_run(run_id, include_superseded=True)
    assert everything.responses == record.responses
    assert everything.judgments == record.judgments
    assert [(r.key, r.text, r.superseded) for r in everything.superseded_responses] == [
        ("b", "answer b", True)
    ]
    assert sorted(
        (j.response_key, j.criterion, j.judge_model) for j in everything.superseded_judgments
    ) == [
        ("a", "gone", "judge-test"),
        ("a", "tone", "old/judge"),
        ("b", "tone", "judge-test"),
    ]
    # superseding twice is a no-op; a second generation keeps both superseded rows
    store.supersede(run_id, ["b"], [("criteria", "a", "tone")])
    store.supersede(run_id, ["b"], [("criteria", "a", "tone")])
    everything = store.load_run(run_id, include_superseded=True)
    assert len(everything.superseded_responses) == 2
    assert len(everything.superseded_judgments) == 4
    assert store.load_run(run_id).summary.n_responses == 1
    store.delete_run(run_id)
    with pytest.raises(StoreError):
        store.get_run(run_id)
