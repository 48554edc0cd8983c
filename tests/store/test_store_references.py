"""Reference review on both backends: status and notes, overrides with their audit trail,
the distinct reference answers, and what a grader grades against."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from store_factories import response

from qualspec.errors import ConfigError, UnknownReferenceError
from qualspec.judges import reference_for_grading
from qualspec.store import (
    GROUND_TRUTH_STATUSES,
    ReferenceAuditEntry,
    ResponseRecord,
    Store,
)

ANSWER = '{"name": "Acme", "industry": "SaaS"}'
T1 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _reference(key: str, call_key: str | None, **overrides: object) -> ResponseRecord:
    values: dict[str, object] = {
        "kind": "reference",
        "candidate": "reference",
        "provider": "ref",
        "model": "big",
        "scenario": "profile",
        "input_id": "acme",
        "temperature": 0.0,
        "effective_temperature": 0.0,
        "text": ANSWER,
        "call_key": call_key,
        "created_at": T1,
    }
    values.update(overrides)
    return response(key, **values)


def _run_with(store: Store, *records: ResponseRecord) -> str:
    run_id = store.create_run("refs", "h", {})
    store.record_responses(run_id, list(records))
    return run_id


def test_status_changes_keep_notes_times_and_an_audit_row_each(store: Store) -> None:
    _run_with(store, _reference("r1", "ck-acme"))
    assert store.reference_review("ck-acme") is None  # never reviewed: unvalidated
    (listed,) = store.reference_answers()
    assert listed.review.status == "unvalidated" and listed.review.audit == []

    review = store.set_reference_status("ck-acme", "validated", "checked by hand", "alice")
    assert review.status == "validated"
    assert review.validation_notes == "checked by hand"
    assert review.human_validated_at is not None
    stored = store.reference_review("ck-acme")
    assert stored is not None
    assert (stored.status, stored.validation_notes) == ("validated", "checked by hand")
    assert stored.human_validated_at == review.human_validated_at
    (entry,) = stored.audit
    assert isinstance(entry, ReferenceAuditEntry)
    who, when, action, before, after, notes = entry  # a plain tuple too
    assert (who, action, before, after, notes) == (
        "alice",
        "validate",
        "unvalidated",
        "validated",
        "checked by hand",
    )
    assert when.tzinfo is not None

    store.set_reference_status("ck-acme", "disputed", "the founding year is wrong", "bob")
    store.set_reference_status("ck-acme", "needs_review", None, "carol")
    final = store.reference_review("ck-acme")
    assert final is not None
    assert final.status == "needs_review"
    assert final.human_validated_at is None  # no longer validated
    assert final.validation_notes == "the founding year is wrong"  # no new notes: kept
    assert [(e.who, e.action, e.before, e.after) for e in final.audit] == [
        ("alice", "validate", "unvalidated", "validated"),
        ("bob", "dispute", "validated", "disputed"),
        ("carol", "needs_review", "disputed", "needs_review"),
    ]
    assert [e.when for e in final.audit] == sorted(e.when for e in final.audit)
    assert set(store.reference_reviews(status="needs_review")) == {"ck-acme"}
    assert store.reference_reviews(status="validated") == {}
    assert store.reference_override("ck-acme") is None


def test_an_override_is_audited_and_a_second_one_keeps_both_rows(store: Store) -> None:
    _run_with(store, _reference("r1", "ck-acme"))
    store.set_reference_status("ck-acme", "disputed", "industry is wrong", "bob")
    first = '{"name": "Acme", "industry": "Hardware"}'
    review = store.override_reference("ck-acme", first, "fixed the industry", "alice")
    assert review.override_text == first
    assert review.status == "validated"  # a person wrote it: it is the ground truth
    assert review.human_validated_at is not None
    second = '{"name": "Acme Corp", "industry": "Hardware"}'
    store.override_reference("ck-acme", second, "full name", "carol")

    stored = store.reference_review("ck-acme")
    assert stored is not None
    assert stored.override_text == second
    assert store.reference_override("ck-acme") == second
    overrides = [e for e in stored.audit if e.action == "override"]
    assert [(e.who, e.before, e.after, e.notes) for e in overrides] == [
        ("alice", ANSWER, first, "fixed the industry"),  # before: the model's answer
        ("carol", first, second, "full name"),  # before: the previous override
    ]
    assert [e.action for e in stored.audit] == ["dispute", "override", "validate", "override"]
    # the model's answer itself is kept as it was
    (answer,) = store.reference_answers()
    assert answer.text == ANSWER and answer.review.override_text == second


def test_a_grader_gets_the_override_status_and_flags(store: Store) -> None:
    _run_with(
        store,
        _reference("r1", "ck-acme"),
        _reference("r2", "ck-empty", input_id="empty", text="  "),
        _reference("r3", "ck-prose", input_id="prose", text="Acme is a SaaS firm."),
        _reference("r4", "ck-fenced", input_id="fenced", text=f"```json\n{ANSWER}\n```"),
    )
    assert reference_for_grading(store, "ck-acme", ANSWER) == (ANSWER, "unvalidated", [])
    fixed = '{"name": "Acme", "industry": "Hardware"}'
    store.override_reference("ck-acme", fixed, None, "alice")
    assert reference_for_grading(store, "ck-acme", ANSWER) == (fixed, "validated", [])

    assert reference_for_grading(store, "ck-empty", "  ")[2] == ["empty_reference"]
    assert reference_for_grading(store, "ck-empty", None)[2] == ["empty_reference"]
    prose = "Acme is a SaaS firm."
    assert reference_for_grading(store, "ck-prose", prose) == (
        prose,
        "unvalidated",
        ["malformed_reference"],
    )
    store.set_reference_status("ck-prose", "disputed", "not JSON", "bob")
    assert reference_for_grading(store, "ck-prose", prose)[1:] == (
        "disputed",
        ["malformed_reference"],
    )
    # an override mends a malformed reference
    store.override_reference("ck-prose", ANSWER, "rewritten as JSON", "bob")
    assert reference_for_grading(store, "ck-prose", prose) == (ANSWER, "validated", [])
    fenced = f"```json\n{ANSWER}\n```"
    assert reference_for_grading(store, "ck-fenced", fenced)[2] == []
    # without a store or a call key: the text as given, unvalidated
    assert reference_for_grading(None, "ck-acme", ANSWER) == (ANSWER, "unvalidated", [])
    assert reference_for_grading(store, None, "") == ("", "unvalidated", ["empty_reference"])
    # an override that is malformed (not a JSON object, or a JSON list) is flagged too
    store.override_reference("ck-fenced", "[1, 2]", "oops", "bob")
    assert reference_for_grading(store, "ck-fenced", fenced) == (
        "[1, 2]",
        "validated",
        ["malformed_reference"],
    )
    store.override_reference("ck-fenced", "name: Acme", None, "bob")
    assert reference_for_grading(store, "ck-fenced", fenced)[2] == ["malformed_reference"]


def test_reference_answers_are_distinct_by_call_key_across_runs(store: Store) -> None:
    later = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    first = _run_with(
        store,
        _reference("r-acme", "ck-acme"),
        _reference("r-globex", "ck-globex", input_id="globex"),
        response("cand", call_key="ck-candidate"),  # a candidate: not a reference
    )
    # a later run reuses acme's reference (from the cache: same call key) and adds one
    second = _run_with(
        store,
        _reference("r-acme", "ck-acme", cached=True, created_at=later),
        _reference("r-initech", "ck-initech", input_id="initech", created_at=later),
        _reference("r-old", None, input_id="old"),  # recorded before call keys: not listed
    )
    answers = {a.call_key: a for a in store.reference_answers()}
    assert set(answers) == {"ck-acme", "ck-globex", "ck-initech"}
    acme = answers["ck-acme"]
    assert (acme.latest_run, acme.runs, acme.created_at) == (second, 2, T1)
    assert (acme.provider, acme.model, acme.scenario, acme.input_id) == (
        "ref",
        "big",
        "profile",
        "acme",
    )
    assert answers["ck-globex"].latest_run == first
    assert {a.call_key for a in store.reference_answers(run_id=first)} == {"ck-acme", "ck-globex"}
    assert {a.call_key for a in store.reference_answers(run_id=second[:-1])} == {
        "ck-acme",
        "ck-initech",
    }
    store.set_reference_status("ck-globex", "validated", None, "alice")
    assert [a.call_key for a in store.reference_answers(status="validated")] == ["ck-globex"]
    assert {a.call_key for a in store.reference_answers(status="unvalidated")} == {
        "ck-acme",
        "ck-initech",
    }


def test_ids_statuses_and_unknown_references_are_checked(store: Store) -> None:
    _run_with(
        store,
        _reference("r1", "abc111"),
        _reference("r2", "abc222", input_id="b"),
        response("cand", call_key="zzz999"),
    )
    assert store.find_reference("abc1") == "abc111"
    assert store.find_reference("abc222") == "abc222"
    with pytest.raises(UnknownReferenceError, match="matches several references"):
        store.find_reference("abc")
    with pytest.raises(UnknownReferenceError, match="no reference answer with id 'zzz'"):
        store.find_reference("zzz")  # a candidate's call key is no reference
    with pytest.raises(UnknownReferenceError, match="no reference answer with id ''"):
        store.find_reference("")
    with pytest.raises(UnknownReferenceError, match="use one of unvalidated, validated"):
        store.set_reference_status("abc111", "approved", None, "alice")
    with pytest.raises(UnknownReferenceError, match="use one of"):
        store.reference_answers(status="approved")
    with pytest.raises(UnknownReferenceError, match="no reference answer with call key"):
        store.set_reference_status("nope", "validated", None, "alice")
    with pytest.raises(UnknownReferenceError, match="no reference answer with call key"):
        store.override_reference("nope", "{}", None, "alice")
    assert issubclass(UnknownReferenceError, ConfigError)  # bad input: exit 2
    assert GROUND_TRUTH_STATUSES == ("unvalidated", "validated", "needs_review", "disputed")


def test_a_review_outlives_the_runs_of_its_answer(store: Store) -> None:
    run_id = _run_with(store, _reference("r1", "ck-acme"))
    store.set_reference_status("ck-acme", "validated", "ok", "alice")
    store.delete_run(run_id)
    assert store.reference_answers() == []
    # still found by its key (it is reviewed); a new run reusing the answer sees it
    assert store.find_reference("ck-ac") == "ck-acme"
    _run_with(store, _reference("r1", "ck-acme", cached=True))
    (again,) = store.reference_answers()
    assert again.review.status == "validated" and again.review.validation_notes == "ok"


def test_a_status_given_to_another_answer_reads_needs_review(store: Store) -> None:
    """The reference's cache entry expired and the model answered differently: what a
    person validated was another answer, so the status no longer applies (an override
    does, whatever the model answers)."""
    _run_with(store, _reference("r1", "ck-acme"))
    store.set_reference_status("ck-acme", "validated", "ok", "alice")
    assert reference_for_grading(store, "ck-acme", ANSWER)[1] == "validated"
    changed = '{"name": "Acme", "industry": "Software"}'
    _run_with(store, _reference("r1", "ck-acme", text=changed, created_at=T1.replace(day=3)))
    assert reference_for_grading(store, "ck-acme", changed) == (changed, "needs_review", [])
    (answer,) = store.reference_answers()
    assert answer.text == changed and answer.review.status == "validated"
    assert answer.review.answer_changed(changed)
    assert [a.call_key for a in store.reference_answers(status="needs_review")] == ["ck-acme"]
    assert store.reference_answers(status="validated") == []
    # validating again validates the new answer
    store.set_reference_status("ck-acme", "validated", "the new one is right", "bob")
    assert reference_for_grading(store, "ck-acme", changed)[1] == "validated"
    # an override holds whatever the model answers
    store.override_reference("ck-acme", ANSWER, None, "bob")
    assert reference_for_grading(store, "ck-acme", "{}") == (ANSWER, "validated", [])
