"""``Store.together``: several writes in one transaction (the recorder writes a batch of
answers with their cache entries that way: one commit instead of one per kind)."""

from __future__ import annotations

import pytest
from store_factories import judgment, response

from qualspec.store import CacheEntry, Store


def _entry(key: str) -> CacheEntry:
    return CacheEntry(key=key, kind="candidate", provider="openai", model="m", text=f"t {key}")


def test_writes_made_together_are_committed_at_its_end(store: Store) -> None:
    run_id = store.create_run("suite", "h1", {})
    with store.together():
        store.record_responses(run_id, [response("a"), response("b")])
        store.record_judgments(run_id, [judgment("a", "tone")])
        store.cache_put_many([_entry("c1")])
        with store.together():  # nested: the outer transaction's
            store.cache_put_many([_entry("c2")])
    assert store.response_keys(run_id) == {"a", "b"}
    assert store.judgment_keys(run_id) == {("a", "tone")}
    assert set(store.cache_get_many(["c1", "c2"])) == {"c1", "c2"}


def test_an_error_together_rolls_back_every_write_made_in_it(store: Store) -> None:
    run_id = store.create_run("suite", "h1", {})
    with pytest.raises(RuntimeError, match="half way"), store.together():
        store.record_responses(run_id, [response("a")])
        store.cache_put_many([_entry("c1")])
        raise RuntimeError("half way")
    assert store.response_keys(run_id, ok_only=False) == set()
    assert store.cache_get_many(["c1"]) == {}
    # the store writes as before afterwards, each write its own transaction
    store.record_responses(run_id, [response("a")])
    assert store.response_keys(run_id) == {"a"}
