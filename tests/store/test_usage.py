"""One usage object (issue 18): the call-accounting fields are declared once, in ``Usage``;
replies carry it, records store it flat, and the tables' columns are generated from it."""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path

import pytest
from sqlalchemy import Boolean, Float, Integer, Text

import qualspec
from qualspec import Reply, Usage
from qualspec.store import USAGE_FIELDS, JudgmentRecord, ResponseRecord
from qualspec.store import _schema as schema

SRC = Path(qualspec.__file__).resolve().parent


def test_usage_is_one_frozen_value_with_the_accounting_fields() -> None:
    assert qualspec.Usage is qualspec.store.Usage is qualspec.engine.Usage
    assert USAGE_FIELDS == (
        "input_tokens",
        "output_tokens",
        "latency_s",
        "queue_s",
        "cost_usd",
        "attempts",
        "error",
        "cached",
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        Usage().attempts = 2  # type: ignore[misc]


@pytest.mark.parametrize("record", [ResponseRecord, JudgmentRecord])
def test_the_records_store_every_usage_field_as_declared(record: type) -> None:
    declared = {f.name: f.type for f in dataclasses.fields(Usage)}
    stored = {f.name: f.type for f in dataclasses.fields(record) if f.name in declared}
    assert stored == declared


@pytest.mark.parametrize("table", [schema.responses, schema.judgments], ids=lambda t: t.name)
def test_the_tables_columns_for_usage_follow_its_types(table: typing.Any) -> None:
    sql = {int: Integer, float: Float, str: Text, bool: Boolean}
    for name, hint in typing.get_type_hints(Usage).items():
        column = table.c[name]
        args = typing.get_args(hint) or (hint,)
        base = next(a for a in args if a is not type(None))
        assert isinstance(column.type, sql[base]), name
        assert column.nullable == (type(None) in args), name


def test_a_reply_carries_its_usage_and_reads_its_fields() -> None:
    usage = Usage(input_tokens=3, output_tokens=2, latency_s=0.5, cost_usd=0.01, attempts=2)
    reply = Reply(text="ok", usage=usage)
    assert (reply.input_tokens, reply.output_tokens, reply.cost_usd) == (3, 2, 0.01)
    assert (reply.latency_s, reply.attempts, reply.cached, reply.error) == (0.5, 2, False, None)
    # a reply no call was made for: nothing paid, no attempt
    assert Reply(text="x").usage == Usage(attempts=0, latency_s=0.0, queue_s=0.0)


def test_from_reply_builds_the_record_with_the_replys_usage() -> None:
    usage = Usage(input_tokens=5, output_tokens=1, latency_s=0.2, queue_s=0.1, cost_usd=0.002)
    reply = Reply(text="Paris", finish_reason="stop", effective_temperature=0.7, usage=usage)
    record = ResponseRecord.from_reply(
        reply, key="k", candidate="c", provider="p", model="m", temperature=1.5, kind="adhoc"
    )
    assert record.usage == usage
    assert (record.text, record.finish_reason, record.effective_temperature) == (
        "Paris",
        "stop",
        0.7,
    )
    assert (record.key, record.candidate, record.kind, record.temperature) == (
        "k",
        "c",
        "adhoc",
        1.5,
    )
    assert record.prompt_versions == {} and record.role is None and record.run_index == 0


def test_no_code_builds_a_response_record_field_by_field() -> None:
    """Only the store makes records from parts (``from_reply``, and rows it reads)."""
    allowed = {"store/_records.py", "store/_results.py"}
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "ResponseRecord"
            ):
                found.append(f"{rel}:{node.lineno}")
    assert found == []
