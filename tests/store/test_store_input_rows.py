"""Input rows (issue 19, "what was sent"): each row's values are stored once, by hash, with
the responses that name it; ``load_run`` gives every response its row's values; the
migration to 0009 keeps older runs, which say they have no row. SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from store_factories import response

from qualspec.store import Store, downgrade, upgrade

ROW = {"id": "acme", "company": "Acme Corp", "year": 1947, "tags": ["anvils", "rockets"]}


def _rows_in(url: str) -> list[tuple[str, str]]:
    """(hash, stored JSON) of every stored input row."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            found = conn.execute(text("SELECT hash, row_json FROM input_rows ORDER BY hash"))
            return [(str(h), str(j)) for h, j in found]
    finally:
        engine.dispose()


def _cells(values: dict[str, Any] | None, n: int, prefix: str = "k") -> list[Any]:
    """``n`` responses of one input row (other candidates, temperatures, runs)."""
    return [
        response(
            f"{prefix}{i}",
            candidate=f"c{i % 3}",
            input_id=None if values is None else str(values.get("id")),
            run_index=i,
            input_values=values,
        )
        for i in range(n)
    ]


def test_a_row_shared_by_many_responses_is_stored_once(db_url: str, store: Store) -> None:
    run_id = store.create_run("s", "h", {})
    other = {"id": "globex", "company": "Globex", "year": 1989, "tags": []}
    # one row's responses come as separate objects with equal values, over two batches
    store.record_responses(run_id, _cells(dict(ROW), 20) + _cells(other, 4, "g"))
    store.record_responses(run_id, _cells(dict(ROW), 5, "late"))
    stored = _rows_in(db_url)
    assert len(stored) == 2
    record = store.load_run(run_id)
    assert len(record.responses) == 29
    acme = [r for r in record.responses if r.input_id == "acme"]
    assert len(acme) == 25 and all(r.input_values == ROW for r in acme)
    assert len({id(r.input_values) for r in acme}) == 1  # one mapping for the row's answers
    assert len({r.input_hash for r in acme}) == 1
    assert {r.input_hash for r in record.responses} == {h for h, _ in stored}
    # the same values in another key order are the same row; the stored JSON keeps the
    # order of the first (the file's)
    run_b = store.create_run("s", "h", {})
    store.record_responses(run_b, _cells(dict(reversed(ROW.items())), 2))
    assert len(_rows_in(db_url)) == 2
    (again,) = {r.input_hash for r in store.load_run(run_b).responses}
    assert again == acme[0].input_hash
    assert list(store.load_run(run_b).responses[0].input_values or {}) == list(ROW)


def test_a_response_without_inputs_has_no_row(db_url: str, store: Store) -> None:
    run_id = store.create_run("s", "h", {})
    store.record_responses(run_id, _cells(None, 2))
    assert _rows_in(db_url) == []
    assert [(r.input_values, r.input_hash) for r in store.load_run(run_id).responses] == [
        (None, None),
        (None, None),
    ]


def test_rows_are_stored_whole_and_secrets_masked(db_url: str, store: Store) -> None:
    run_id = store.create_run("s", "h", {})
    big = "x" * 250_000
    values = {
        "id": "r1",
        "key": "C major",  # a column called key is data, not a setting
        "token": "the",
        "note": "call with sk-abcdefghijklmnopqrstuvwx please",
        "nested": {"url": "postgresql://bob:hunter2@db/x", "list": ["Bearer abcdef.123456"]},
        "big": big,
        "when": date(2026, 1, 2),  # a YAML date: stored as text
        "script": "<script>alert(1)</script>",
    }
    store.record_responses(run_id, _cells(values, 1))
    (got,) = store.load_run(run_id).responses
    row = got.input_values
    assert row is not None
    assert (row["key"], row["token"], row["big"]) == ("C major", "the", big)
    assert row["note"] == "call with *** please"
    assert "hunter2" not in row["nested"]["url"] and "***" in row["nested"]["url"]
    assert row["nested"]["list"] == ["Bearer ***"]
    assert row["when"] == "2026-01-02" and row["script"] == "<script>alert(1)</script>"
    (stored,) = _rows_in(db_url)
    assert "sk-abcdefghijklmnopqrstuvwx" not in stored[1] and "hunter2" not in stored[1]


def test_an_error_replaced_by_an_answer_keeps_its_row(store: Store) -> None:
    run_id = store.create_run("s", "h", {})
    failed = response("k0", input_id="acme", input_values=dict(ROW), text=None, error="HTTP 500")
    store.record_responses(run_id, [failed])
    store.record_responses(run_id, _cells(dict(ROW), 1))
    (got,) = store.load_run(run_id).responses
    assert got.error is None and got.input_values == ROW


def test_deleting_a_run_drops_only_the_rows_no_other_run_uses(db_url: str, store: Store) -> None:
    a, b = store.create_run("s", "h", {}), store.create_run("s", "h", {})
    shared, own = dict(ROW), {"id": "only-a", "company": "Initech"}
    store.record_responses(a, _cells(shared, 3) + _cells(own, 2, "o"))
    store.record_responses(b, _cells(shared, 2))
    assert len(_rows_in(db_url)) == 2
    store.delete_run(a)
    assert len(_rows_in(db_url)) == 1
    assert [r.input_values for r in store.load_run(b).responses] == [ROW, ROW]
    store.delete_run(b)
    assert _rows_in(db_url) == []


def test_superseded_responses_keep_their_rows(store: Store) -> None:
    run_id = store.create_run("s", "h", {})
    store.record_responses(run_id, _cells(dict(ROW), 2))
    store.supersede(run_id, ["k0"])
    record = store.load_run(run_id, include_superseded=True)
    assert [r.input_values for r in record.superseded_responses] == [ROW]
    assert [r.input_values for r in record.responses] == [ROW]


def _old_response(url: str) -> None:
    """A response written at revision 0008, with an input id (no row: none was kept)."""
    engine = create_engine(url)
    pg = engine.dialect.name == "postgresql"
    ts = "'2026-05-06 07:08:09+00'" if pg else "'2026-05-06 07:08:09.000000'"
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO runs (id, suite_name, suite_hash, status, started_at, metadata)"
                f" VALUES ('20260101-000000-abcdef', 'old', 'h0', 'finished', {ts}, '{{}}')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO responses (run_id, key, candidate, role, scenario, input_id,"
                " temperature, effective_temperature, run_index, provider, model, text,"
                " attempts, cached, prompt_versions, created_at, kind, superseded, call_key)"
                " VALUES ('20260101-000000-abcdef', 'k0', 'c', NULL, 's', 'acme', 0.0, 0.0,"
                f" 0, 'openai', 'm', 'old answer', 1, FALSE, '{{}}', {ts}, 'candidate', FALSE,"
                " 'ck0')"
            )
        )
    engine.dispose()


def test_the_migration_upgrades_a_0008_database_and_back(db_url: str) -> None:
    upgrade(db_url, "0008")
    _old_response(db_url)
    with Store.open(db_url) as store:  # upgraded to 0009 on open
        (old,) = store.load_run("20260101-000000-abcdef").responses
        assert (old.input_id, old.input_values, old.input_hash) == ("acme", None, None)
        assert old.text == "old answer"
        run_id = store.create_run("s", "h", {})
        store.record_responses(run_id, _cells(dict(ROW), 3))
        assert [r.input_values for r in store.load_run(run_id).responses] == [ROW] * 3
    assert len(_rows_in(db_url)) == 1
    downgrade(db_url, "0008")  # the rows go, the answers stay
    upgrade(db_url)
    with Store.open(db_url) as store:
        kept = store.load_run(run_id).responses
        assert [(r.text, r.input_values) for r in kept] == [
            (f"answer k{i}", None) for i in range(3)
        ]
        (old,) = store.load_run("20260101-000000-abcdef").responses
        assert old.text == "old answer"
    assert _rows_in(db_url) == []


def test_a_row_with_keys_that_are_not_text_is_still_stored(store: Store) -> None:
    """A Python suite can hand any mapping: its keys are stored as text."""
    run_id = store.create_run("s", "h", {})
    store.record_responses(run_id, _cells({1: "one", "id": "x"}, 1))
    (got,) = store.load_run(run_id).responses
    assert got.input_values == {"1": "one", "id": "x"}


def test_a_mapping_refilled_between_records_stores_each_rows_values(store: Store) -> None:
    """The store remembers the rows it encoded by the object given (an engine gives all
    the answers of a row one object); an object filled anew is encoded anew."""
    run_id = store.create_run("s", "h", {})
    reused: dict[str, Any] = {}
    for name in ("acme", "globex", "initech"):
        reused.clear()
        reused.update(id=name, company=name.title())
        store.record_responses(run_id, _cells(reused, 1, prefix=name))
    got = {r.input_id: r.input_values for r in store.load_run(run_id).responses}
    assert got == {n: {"id": n, "company": n.title()} for n in ("acme", "globex", "initech")}


@pytest.mark.parametrize(
    "text",
    [
        "plain words, nothing secret",
        "key sk-abcdefghijklmnopqrstuvwx",
        "Authorization: Bearer abc.def.ghi-123",
        "BASIC dXNlcjpwYXNzd29yZA==",
        "OPENAI_API_KEY=sk-live-1234567890abcdef",
        '"password": "hunter2hunter2"',
        "db postgresql://bob:hunter2@db/x?sslmode=require",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "AKIAABCDEFGHIJKLMNOP and AIzaSyA-abcdefghijklmnopqrstuvwxyz0123",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop",
        "a token=abcdefgh in a sentence; xoxb-1234567890-abcdef",
    ],
)
def test_a_rows_text_is_masked_as_redact_text_masks_it(text: str) -> None:
    from qualspec.store import redact_text, redact_values

    assert redact_values({"v": text, "n": [text]}) == {
        "v": redact_text(text),
        "n": [redact_text(text)],
    }


def test_a_row_holding_itself_is_stored_as_text_not_a_failed_run(store: Store) -> None:
    run_id = store.create_run("s", "h", {})
    looped: dict[str, Any] = {"id": "x", "note": "sk-abcdefghijklmnopqrstuvwx"}
    looped["self"] = looped
    store.record_responses(run_id, _cells(looped, 1))
    (got,) = store.load_run(run_id).responses
    assert got.input_values is not None and got.input_values["id"] == "x"
    assert got.input_values["note"] == "***" and isinstance(got.input_values["self"], str)
    assert "sk-abcdefghijklmnopqrstuvwx" not in got.input_values["self"]
