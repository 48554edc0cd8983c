"""`qualspec reference ...` end to end, in process, against runs whose reference answers
the fake server made (``Plan.with_references``): list, show, validate, dispute,
needs-review and override, and the one-line errors (exit 2) of bad input."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualspec import Candidate, Evaluation, EvaluatorConfig, ProviderConfig, Scenario
from qualspec.cli import main
from qualspec.engine import ExecuteOptions, RunOutcome, Session, expand
from qualspec.judges import reference_for_grading
from qualspec.spec import load_evaluation
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_REFERENCE_KEY"
COMPANIES = {"acme": "SaaS", "globex": "Hardware"}

DOCS = " (see docs/reference/cli.md)"  # the page an error line names


def _answer(body: dict[str, Any]) -> str:
    """The reference model answers JSON; the candidate model prose."""
    prompt = str(body["messages"][-1]["content"])
    name = prompt.rsplit(" ", 1)[-1]
    if body["model"] == "big":
        return json.dumps({"name": name, "industry": COMPANIES.get(name, "unknown")})
    return f"{name} is a company"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv(KEY_ENV, "sk-reference-test")
    monkeypatch.setenv("QUALSPEC_USER", "alice")
    monkeypatch.setenv("COLUMNS", "200")
    with FakeServer(answer=_answer) as srv:
        yield srv


def _run(server: FakeServer, tmp_path: Path, db: str) -> RunOutcome:
    provider = ProviderConfig(type="openai", base_url=server.base_url, api_key_env=KEY_ENV)
    evaluation = Evaluation(
        name="profiles",
        candidates=[Candidate(name="small", model="fake/small")],
        scenarios=[
            Scenario(
                name="profile",
                prompt="Profile of {{ company }}",
                criteria=["is a profile"],
                inputs=[{"id": name, "company": name} for name in COMPANIES],
            )
        ],
        judges=[EvaluatorConfig(type="criteria", model="fake/judge")],
        providers={"fake": provider},
    )
    suite = load_evaluation(evaluation, tmp_path)
    plan = expand(suite).with_references("fake/big")

    async def go() -> RunOutcome:
        async with Session(db=db, options=ExecuteOptions(calibrate=False)) as session:
            return await session.run_plan(suite, plan)

    outcome = asyncio.run(go())
    assert outcome.status == "finished"
    return outcome


def qualspec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    captured = capsys.readouterr()
    code = exc.value.code
    return (code if isinstance(code, int) else 1), captured.out, captured.err


@pytest.fixture
def runs(server: FakeServer, tmp_path: Path) -> tuple[str, str, str]:
    """Two runs of the same suite (the second reuses the references from the cache)."""
    db = f"sqlite:///{tmp_path / 'q.db'}"
    first = _run(server, tmp_path, db)
    calls = server.calls
    second = _run(server, tmp_path, db)
    assert server.calls - calls == 0  # references, answers and judgments from the cache
    return db, first.run_id, second.run_id


def _keys(db: str) -> dict[str, str]:
    with Store.open(db) as store:
        return {a.input_id or "": a.call_key for a in store.reference_answers()}


def test_list_shows_each_reference_once_with_its_status_model_and_latest_run(
    runs: tuple[str, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, first, second = runs
    keys = _keys(db)
    assert set(keys) == set(COMPANIES)
    with Store.open(db) as store:  # the call key is the cache key of the reference's call
        cached = store.cache_get_many(keys.values())
        assert {e.kind for e in cached.values()} == {"reference"} and len(cached) == 2
        responses = store.load_run(first).responses + store.load_run(second).responses
    refs = [r for r in responses if r.kind == "reference"]
    assert len(refs) == 4 and {r.call_key for r in refs} == set(keys.values())
    assert all(r.call_key for r in responses)  # candidates' calls have their key too
    code, out, err = qualspec(capsys, "reference", "list", "--db", db)
    assert (code, err) == (0, "")
    rows = [line for line in out.splitlines() if "fake/big" in line]
    assert len(rows) == 2  # one per input, not one per run
    for name, key in keys.items():
        (row,) = [line for line in rows if key[:12] in line]
        assert "unvalidated" in row and "profile" in row and name in row
        assert second in row  # the latest run that used it
    code, out, _ = qualspec(capsys, "reference", "list", "--run", first[:-1], "--db", db)
    assert code == 0 and all(key[:12] in out for key in keys.values())
    code, out, _ = qualspec(capsys, "reference", "list", "--status", "validated", "--db", db)
    assert (code, out.strip()) == (0, "No reference answers match")


def test_validate_dispute_needs_review_and_show_with_the_audit_trail(
    runs: tuple[str, str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _, _ = runs
    acme = _keys(db)["acme"]
    code, out, err = qualspec(
        capsys, "reference", "validate", acme[:10], "--notes", "checked", "--db", db
    )
    assert (code, err) == (0, "")
    assert out.strip() == f"reference {acme[:12]}: unvalidated -> validated (by alice)"
    monkeypatch.setenv("QUALSPEC_USER", "bob")
    code, out, _ = qualspec(
        capsys, "reference", "dispute", acme, "--notes", "industry is wrong", "--db", db
    )
    assert code == 0 and "validated -> disputed (by bob)" in out
    code, out, _ = qualspec(capsys, "reference", "needs-review", acme, "--db", db)
    assert code == 0 and "disputed -> needs_review" in out

    code, out, _ = qualspec(capsys, "reference", "list", "--status", "needs_review", "--db", db)
    assert code == 0 and acme[:12] in out and _keys(db)["globex"][:12] not in out

    code, out, err = qualspec(capsys, "reference", "show", acme[:8], "--db", db)
    assert (code, err) == (0, "")
    assert f"reference  {acme}" in out
    assert "status     needs_review" in out
    assert "notes      industry is wrong" in out
    assert '    {"name": "acme", "industry": "SaaS"}' in out
    assert "answer     (the model's):" in out
    trail = out.split("audit trail (3):", 1)[1].splitlines()
    assert "alice  validate  unvalidated -> validated  notes: checked" in trail[1]
    assert "bob  dispute  validated -> disputed  notes: industry is wrong" in trail[2]
    assert "bob  needs-review" not in out and "bob  needs_review  disputed -> needs_review" in out


def test_override_is_shown_marked_audited_and_graded_against(
    runs: tuple[str, str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db, _, _ = runs
    acme = _keys(db)["acme"]
    fixed = tmp_path / "fixed.json"
    fixed.write_text('{"name": "Acme Corp", "industry": "SaaS"}\n', encoding="utf-8")
    code, out, err = qualspec(
        capsys, "reference", "override", acme, "--file", str(fixed), "--notes", "full name",
        "--db", db,
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert "unvalidated -> validated (by alice)" in out
    again = tmp_path / "again.json"
    again.write_text('{"name": "ACME Corporation", "industry": "SaaS"}', encoding="utf-8")
    code, _, _ = qualspec(capsys, "reference", "override", acme, "--file", str(again), "--db", db)
    assert code == 0

    code, out, _ = qualspec(capsys, "reference", "show", acme, "--db", db)
    assert code == 0
    assert "answer     OVERRIDE (written by a person; graders use it):" in out
    assert '    {"name": "ACME Corporation", "industry": "SaaS"}' in out
    assert "model's answer (replaced):" in out and '"name": "acme"' in out
    assert out.count(" alice  override") == 2
    assert "audit trail (3):" in out  # override, validate, override
    befores = out.split("    before:")[1:]
    assert '"name": "acme"' in befores[0].split("after:")[0]  # the model's answer
    assert "Acme Corp" in befores[1].split("after:")[0]  # the first override
    code, out, _ = qualspec(capsys, "reference", "list", "--db", db)
    assert "validated (override)" in out

    with Store.open(db) as store:
        (answer,) = store.reference_answers(call_keys=[acme])
        text, status, flags = reference_for_grading(store, acme, answer.text)
    assert (json.loads(text or ""), status, flags) == (
        {"name": "ACME Corporation", "industry": "SaaS"},
        "validated",
        [],
    )


def test_an_override_must_fit_the_output_schema_the_run_recorded(
    runs: tuple[str, str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db, _, second = runs
    acme = _keys(db)["acme"]
    schema = {"fields": [{"name": "name", "critical": True}, {"name": "industry"}]}
    with Store.open(db) as store:
        store.update_run_metadata(second, {"output_schemas": {"profile": schema}})
    partial = tmp_path / "partial.json"
    partial.write_text('{"name": "Acme"}', encoding="utf-8")
    code, out, err = qualspec(
        capsys, "reference", "override", acme, "--file", str(partial), "--db", db
    )
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"qualspec: error: {partial}: does not match the output_schema of scenario 'profile': "
        "field 'industry' is missing: add it (null when there is no value) "
        "(see docs/reference/cli.md)"
    ]
    with Store.open(db) as store:
        store.update_run_metadata(
            second,
            {
                "output_schemas": {
                    "profile": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {"founded": {"type": "integer"}},
                    }
                }
            },
        )
    partial.write_text('{"name": "Acme", "founded": "1990"}', encoding="utf-8")
    code, _, err = qualspec(
        capsys, "reference", "override", acme, "--file", str(partial), "--db", db
    )
    assert code == 2
    assert err.strip().endswith("field 'founded' must be integer, not string" + DOCS)
    partial.write_text('{"name": "Acme", "founded": 1990}', encoding="utf-8")
    code, _, err = qualspec(
        capsys, "reference", "override", acme, "--file", str(partial), "--db", db
    )
    assert (code, err) == (0, "")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "nope"], "no reference answer with id 'nope': see `qualspec reference list`"),
        (["validate", "nope"], "no reference answer with id 'nope'"),
        (["list", "--status", "approved"], "unknown reference status 'approved': use one of"),
        (["list", "--run", "nope"], "no run with id 'nope'"),
        (["override", "ACME", "--file", "missing.json"], "missing.json: no such file"),
        (["override", "ACME", "--file", "prose.txt"], "prose.txt:1:1: not JSON"),
        (["override", "ACME", "--file", "empty.json"], "empty.json: the file is empty"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    runs: tuple[str, str, str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    db, _, _ = runs
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prose.txt").write_text("Acme is a SaaS company.", encoding="utf-8")
    (tmp_path / "empty.json").write_text("\n", encoding="utf-8")
    acme = _keys(db)["acme"]
    args = [acme if a == "ACME" else a for a in args]
    code, out, err = qualspec(capsys, "reference", *args, "--db", db)
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("qualspec: error: "), err
    assert message in lines[0] and "Traceback" not in err
    with Store.open(db) as store:  # nothing was changed
        assert store.reference_reviews() == {}


def test_a_validated_reference_whose_answer_changed_is_listed_as_needing_review(
    runs: tuple[str, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, _, second = runs
    acme = _keys(db)["acme"]
    assert qualspec(capsys, "reference", "validate", acme, "--db", db)[0] == 0
    with Store.open(db) as store:  # the reference asked again, answered differently
        (old,) = [
            r
            for r in store.load_run(second).responses
            if r.kind == "reference" and r.call_key == acme
        ]
        run_id = store.create_run("profiles", "h", {})
        changed = dataclasses.replace(old, text='{"name": "acme", "industry": "Software"}')
        store.record_responses(run_id, [changed])
    code, out, _ = qualspec(capsys, "reference", "list", "--status", "needs_review", "--db", db)
    assert code == 0 and acme[:12] in out
    assert "needs_review (was validated: the answer changed since)" in out
    code, out, _ = qualspec(capsys, "reference", "show", acme, "--db", db)
    assert "status     needs_review (was validated: the answer changed since)" in out
