"""Record factories and subprocess targets shared by the store tests."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from qualspec.store import JudgmentRecord, ResponseRecord


def response(key: str, **overrides: Any) -> ResponseRecord:
    """A successful response record with sensible defaults."""
    values: dict[str, Any] = {
        "key": key,
        "candidate": "small",
        "role": "tutor",
        "scenario": "greeting",
        "input_id": None,
        "temperature": 0.7,
        "effective_temperature": 0.7,
        "run_index": 0,
        "provider": "openai",
        "model": "gpt-test",
        "text": f"answer {key}",
        "finish_reason": "stop",
        "input_tokens": 12,
        "output_tokens": 34,
        "latency_s": 0.25,
        "cost_usd": 0.001,
        "attempts": 1,
        "prompt_versions": {},
        "created_at": datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
    }
    values.update(overrides)
    return ResponseRecord(**values)


def judgment(response_key: str, criterion: str, **overrides: Any) -> JudgmentRecord:
    """A scored judgment record with sensible defaults."""
    values: dict[str, Any] = {
        "response_key": response_key,
        "criterion": criterion,
        "judge_key": f"j-{response_key}-{criterion}"[:128],
        "judge_model": "judge-test",
        "threshold": 7.0,
        "score": 8.0,
        "passed": True,
        "reasoning": "clear and polite",
        "raw_text": '{"score": 8}',
        "input_tokens": 100,
        "output_tokens": 20,
        "latency_s": 0.5,
        "cost_usd": 0.002,
        "created_at": datetime(2026, 1, 2, 3, 4, 6, tzinfo=UTC),
    }
    values.update(overrides)
    return JudgmentRecord(**values)


def write_rows(url: str, run_id: str, prefix: str, count: int, barrier: Any) -> None:
    """Subprocess target: open the store and write ``count`` rows, one transaction each."""
    from qualspec.store import Store

    barrier.wait(timeout=60)
    store = Store.open(url)
    try:
        for i in range(count):
            store.record_responses(run_id, [response(f"{prefix}-{i}", run_index=i)])
            if i % 10 == 0:
                store.record_judgments(run_id, [judgment(f"{prefix}-{i}", "tone")])
                # read-then-write transactions: the ones that need BEGIN IMMEDIATE
                store.prompt_version(f"prompt-{prefix}", f"text {i}")
                store.update_run_metadata(run_id, {prefix: i})
    finally:
        store.close()


def open_store(url: str, barrier: Any, results: Any) -> None:
    """Subprocess target: open (and so migrate) a fresh database at the same moment."""
    from qualspec.store import Store

    barrier.wait(timeout=60)
    try:
        store = Store.open(url)
        results.put(("ok", store.schema_revision))
        store.close()
    except Exception as exc:  # noqa: BLE001 - reported to the test
        results.put(("error", repr(exc)))


def try_acquire(url: str, run_id: str, barrier: Any, results: Any, done: Any) -> None:
    """Subprocess target: try to take the run lock, report, hold it until ``done``."""
    from qualspec.errors import RunLockedError
    from qualspec.store import Store

    store = Store.open(url)
    barrier.wait(timeout=60)
    try:
        store.acquire_run(run_id)
        results.put(("won", os.getpid()))
    except RunLockedError as exc:
        results.put(("locked", str(exc)))
    done.wait(timeout=60)
    store.close()
