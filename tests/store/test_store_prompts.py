"""Prompt versions: dedupe by content, increasing versions, safe under concurrency."""

from __future__ import annotations

import threading

import pytest

from qualspec.errors import StoreError
from qualspec.store import Store


def test_versions_increment_per_name_and_dedupe(store: Store) -> None:
    v1 = store.prompt_version("system_prompt", "Be brief.")
    v2 = store.prompt_version("system_prompt", "Be thorough.")
    again = store.prompt_version("system_prompt", "Be brief.")
    other = store.prompt_version("judge_criteria", "Be brief.")
    assert again == v1 and len({v1, v2, other}) == 3
    assert store.get_prompt("system_prompt", 1).id == v1
    assert store.get_prompt("system_prompt", 2).text == "Be thorough."
    assert store.get_prompt("judge_criteria", 1).id == other
    by_id = store.get_prompt_by_id(v2)
    assert (by_id.name, by_id.version) == ("system_prompt", 2)
    assert len(by_id.content_hash) == 64 and by_id.created_at.tzinfo is not None
    listed = [(p.name, p.version) for p in store.list_prompts()]
    assert listed == [("judge_criteria", 1), ("system_prompt", 1), ("system_prompt", 2)]
    assert [p.version for p in store.list_prompts("system_prompt")] == [1, 2]


def test_many_keeps_order_and_a_second_store_sees_the_same_ids(store: Store, db_url: str) -> None:
    pairs = [("a", "x"), ("b", "x"), ("a", "y"), ("a", "x")]
    ids = store.prompt_versions_many(pairs)
    assert ids[0] == ids[3] and len(set(ids)) == 3
    with Store.open(db_url) as second:
        assert second.prompt_versions_many(pairs) == ids


def test_unknown_prompt_is_a_clear_error(store: Store) -> None:
    with pytest.raises(StoreError, match="qualspec prompts list"):
        store.get_prompt("nope", 1)
    with pytest.raises(StoreError, match="qualspec prompts list"):
        store.get_prompt_by_id(12345)


def test_concurrent_writers_get_distinct_versions(db_url: str) -> None:
    stores = [Store.open(db_url) for _ in range(4)]
    results: dict[int, list[int]] = {}
    barrier = threading.Barrier(len(stores))

    def work(n: int) -> None:
        barrier.wait()
        results[n] = [stores[n].prompt_version("shared", f"text {i}") for i in range(8)]

    threads = [threading.Thread(target=work, args=(n,)) for n in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in stores:
        s.close()
    assert all(r == results[0] for r in results.values())
    with Store.open(db_url) as check:
        versions = [p.version for p in check.list_prompts("shared")]
    assert versions == list(range(1, 9))
