"""Looking runs and references up by id: an id no run could have (100,000 characters) is
an unknown id, not a database error (SQLite refuses a LIKE pattern that long), and the
runs list can leave one suite out (the web app hides the Lab's runs)."""

from __future__ import annotations

import pytest

from qualspec.errors import UnknownReferenceError, UnknownRunError
from qualspec.store import Store


def test_an_id_of_100_000_characters_is_unknown(store: Store) -> None:
    run_id = store.create_run("suite", "h", {})
    long_id = run_id + "a" * 100_000
    with pytest.raises(UnknownRunError, match="no run with an id of 100"):
        store.load_run(long_id)
    with pytest.raises(UnknownRunError) as caught:
        store.get_run(long_id)
    assert len(str(caught.value)) < 200  # not echoed back whole
    with pytest.raises(UnknownReferenceError, match="no reference answer with an id of"):
        store.find_reference("ck" * 50_000)
    assert store.get_run(run_id[:8]).id == run_id  # prefixes still work


def test_the_runs_list_can_leave_a_suite_out(store: Store) -> None:
    suite = store.create_run("suite", "h", {})
    lab = store.create_run("(lab)", "h", {"kind": "lab"})
    assert {r.id for r in store.list_runs()} == {suite, lab}
    assert [r.id for r in store.list_runs(exclude_suite="(lab)")] == [suite]
    assert [r.id for r in store.list_runs("(lab)")] == [lab]
