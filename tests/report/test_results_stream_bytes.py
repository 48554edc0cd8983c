"""The streamed results file of a large run (``write_results_stream``) is byte for byte
what it was when each line was made from ``ResponseRecord`` fields one ``getattr`` at a
time and every page asked for its evaluation records (issue 20: the end of a run of a
million cells writes it with less work per row, never a different file)."""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from qualspec.report import write_results_stream
from qualspec.store import JudgmentRecord, ResponseRecord, Store

_NOT_EXPORTED = {"prompt_versions", "prompt_version", "input_hash"}


def _default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(type(value).__name__)


def _fields(record: Any) -> dict[str, Any]:
    data = {
        f.name: getattr(record, f.name)
        for f in dataclasses.fields(record)
        if f.name not in _NOT_EXPORTED
    }
    data["created_at"] = record.created_at.isoformat() if record.created_at else None
    return data


def _as_before(store: Store, run_id: str, path: Path) -> bytes:
    """The file as the writer made it before: the head from the new file (unchanged
    code), then one line per response made field by field, its judgments asked for."""
    text = path.read_text(encoding="utf-8")
    head = text[: text.index('"responses": [') + len('"responses": [')]
    encode = json.JSONEncoder(ensure_ascii=False, default=_default).encode
    lines = []
    for page in store.response_pages(run_id):
        judged: dict[str, list[JudgmentRecord]] = defaultdict(list)
        for judgment in store.judgments_of(run_id, [r.key for r in page]):
            judged[judgment.response_key].append(judgment)
        for response in page:
            item = _fields(response)
            mine = sorted(judged.get(response.key, ()), key=lambda j: (j.evaluator, j.criterion))
            item["judgments"] = [{**_fields(j), "served_by": j.served_by} for j in mine]
            lines.append(encode(item))
    body = "".join(("\n    " if i == 0 else ",\n    ") + line for i, line in enumerate(lines))
    return (head + body + "\n  ]\n}\n").encode("utf-8")


def _response(i: int, **extra: Any) -> ResponseRecord:
    return ResponseRecord(
        key=f"k{i:04d}",
        candidate="bot" if i % 2 else "bot-2",
        role=None if i % 3 else "expert",
        scenario="s",
        input_id=f"r{i}",
        temperature=None if i % 4 else 0.7,
        effective_temperature=0.7 if i % 4 == 0 else None,
        run_index=i % 2,
        provider="p",
        model="m",
        text=f'answer {i}: café ✓ "quoted"\n' if i % 7 else None,
        error=None if i % 7 else "HTTP 500: boom",
        input_tokens=i,
        output_tokens=2 * i,
        latency_s=0.25,
        cost_usd=0.001 * i,
        cached=bool(i % 5 == 0),
        prompt_versions={"scenario_prompt:1": 1},
        # no fraction at all on some rows: ISO text then has none either
        created_at=datetime(2026, 11, 28, 3, 0, i % 60, 0 if i % 10 == 0 else i, tzinfo=UTC),
        input_values={"q": f"question {i}"},
        **extra,
    )


@pytest.mark.parametrize("judged", [True, False], ids=["judged", "no-judgments"])
@pytest.mark.parametrize("lite", [False, True], ids=["sqlalchemy", "stdlib-sqlite3"])
def test_the_streamed_results_file_is_byte_identical_to_the_field_by_field_one(
    tmp_path: Path, judged: bool, lite: bool
) -> None:
    """Both SQLite stores: ``Store.open`` gives the stdlib one, whose lines are made from its
    rows with no record in between (``response_json_pages``)."""
    url = f"sqlite:///{tmp_path / 'q.db'}"
    store = Store.open(url) if lite else Store(url)
    assert (type(store) is not Store) == lite
    try:
        run_id = store.create_run("suite", "hash", {"python": "3.11"})
        store.record_responses(run_id, [_response(i) for i in range(1234)])  # pages of 500
        if judged:
            store.record_judgments(
                run_id,
                [
                    JudgmentRecord(
                        response_key=f"k{i:04d}",
                        criterion=criterion,
                        judge_key=f"j{i}",
                        judge_model="judge",
                        threshold=7.0,
                        score=8.0 if i % 2 else None,
                        passed=bool(i % 2),
                        reasoning="fine ✓",
                        scores={"a": 1.0} if i % 3 == 0 else None,
                        details={"served_by": "http://replica"} if i % 5 == 0 else None,
                    )
                    for i in range(0, 1234, 3)
                    for criterion in ("Zeta.", "Alpha.")
                ],
            )
        store.finish_run(run_id, "finished")
        out = tmp_path / "out.json"
        write_results_stream(store, run_id, out)
        assert out.read_bytes() == _as_before(store, run_id, out)
        data = json.loads(out.read_text(encoding="utf-8"))
        assert len(data["responses"]) == 1234
        judgments = sum(len(r["judgments"]) for r in data["responses"])
        assert judgments == (2 * len(range(0, 1234, 3)) if judged else 0)
    finally:
        store.close()
