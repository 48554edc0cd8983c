"""Parts of a run (issue 19, a viewer at size): ``load_run_part`` reads one page of answers
and their evaluation records by id or by offset, ``search_run`` finds the answers whose
texts hold a word (SQL ``LIKE``, any case, ``%`` and ``_`` taken literally), and
``run_stamp`` changes whenever the run's rows do. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from store_factories import judgment, response

from qualspec.store import Store


def _seed(store: Store, n: int = 30) -> str:
    run_id = store.create_run("parts", "h", {})
    store.record_responses(
        run_id,
        [
            response(
                f"k{i:03d}",
                run_index=i,
                text=f"answer {i}"
                + (" Grüße aus Köln" if i == 7 else "")
                + (" 100%_sure" if i == 9 else ""),
                error="HTTP 500 upstream" if i == 11 else None,
            )
            for i in range(n)
        ],
    )
    records = []
    for i in range(n):
        records.append(judgment(f"k{i:03d}", "clarity", reasoning=f"reason {i}"))
        records.append(
            judgment(
                f"k{i:03d}",
                "cites",
                evaluator="expect",
                reasoning="MISSING citation" if i == 4 else "found",
            )
        )
    store.record_judgments(run_id, records)
    store.finish_run(run_id, "finished")
    return run_id


def test_a_part_by_ids_keeps_their_order_with_each_answers_records(store: Store) -> None:
    run_id = _seed(store)
    ids = store.run_response_ids(run_id)
    assert len(ids) == 30
    wanted = [ids["k012"], ids["k003"], 10**9, ids["k020"]]  # an unknown id is skipped
    part = store.load_run_part(run_id, ids=wanted)
    assert [r.key for r in part.responses] == ["k012", "k003", "k020"]
    assert part.summary.id == run_id and part.summary.n_responses == 30
    # each answer's records follow it: the criteria judge's first, then others by name
    assert [(j.response_key, j.evaluator, j.criterion) for j in part.judgments] == [
        ("k012", "criteria", "clarity"),
        ("k012", "expect", "cites"),
        ("k003", "criteria", "clarity"),
        ("k003", "expect", "cites"),
        ("k020", "criteria", "clarity"),
        ("k020", "expect", "cites"),
    ]
    assert store.load_run_part(run_id, ids=[]).responses == []


def test_a_part_by_offset_in_the_order_recorded(store: Store) -> None:
    run_id = _seed(store)
    part = store.load_run_part(run_id, offset=10, limit=5)
    assert [r.key for r in part.responses] == [f"k{i:03d}" for i in range(10, 15)]
    assert {j.response_key for j in part.judgments} == {r.key for r in part.responses}
    assert len(store.load_run_part(run_id, offset=25).responses) == 5
    # the same records as the whole run's, field for field
    whole = store.load_run(run_id)
    by_key = {r.key: r for r in whole.responses}
    assert all(r == by_key[r.key] for r in part.responses)


def test_a_part_skips_superseded_rows(store: Store) -> None:
    run_id = _seed(store)
    ids = store.run_response_ids(run_id)
    store.supersede(
        run_id, response_keys=["k001"], evaluation_keys=[("criteria", "k002", "clarity")]
    )
    part = store.load_run_part(run_id, ids=[ids["k001"], ids["k002"]])
    assert [r.key for r in part.responses] == ["k002"]
    assert [j.criterion for j in part.judgments] == ["cites"]
    assert "k001" not in store.run_response_ids(run_id)


@pytest.mark.parametrize(
    ("word", "keys"),
    [
        ("ANSWER 1", {"k001"} | {f"k{i:03d}" for i in range(10, 20)}),  # any case
        ("missing CITATION", {"k004"}),  # in an evaluation record's reasoning
        ("http 500", {"k011"}),  # in the answer's error
        ("%_s", {"k009"}),  # LIKE's wildcards taken literally
        ("_", {"k009"}),
        ("KÖLN", {"k007"}),  # a word outside ASCII, in any case
        ("grüße", {"k007"}),
        ("nowhere", set()),
    ],
)
def test_search_finds_the_answers_whose_texts_hold_a_word(
    store: Store, word: str, keys: set[str]
) -> None:
    run_id = _seed(store)
    by_id = {i: k for k, i in store.run_response_ids(run_id).items()}
    assert {by_id[i] for i in store.search_run(run_id, word)} == keys


def test_the_stamp_changes_with_the_rows(store: Store) -> None:
    run_id = _seed(store, 5)
    first = store.run_stamp(run_id)
    assert first is not None and first[0] == "finished"
    assert first[3] == 5 and first[5] == 10
    assert store.run_stamp(run_id) == first
    assert store.run_stamp(run_id[:-1]) is None  # an exact id only
    store.supersede(run_id, response_keys=["k001"])
    store.record_responses(run_id, [response("k001", text="again")])  # re-added: a new row
    second = store.run_stamp(run_id)
    assert second is not None and second[3] == 6 and second[4] > first[4]
    store.record_judgments(run_id, [judgment("k001", "tone")])
    third = store.run_stamp(run_id)
    assert third is not None and third[:5] == second[:5]
    assert third[5] == 11 and third[6] > second[6]
    store.update_run_metadata(run_id, {"note": "x"})
    fourth = store.run_stamp(run_id)
    assert fourth is not None and fourth[2] != third[2] and fourth[3:] == third[3:]
    store.finish_run(run_id, "interrupted")
    assert store.run_stamp(run_id)[:2] != fourth[:2]  # type: ignore[index]
