"""Field-grader calibration: does the grader tell an equal-meaning value from a wrong one?

The criteria judge's calibration (:mod:`._calibration`) for the reference field grader. A
built-in set of known field pairs (``data/field_calibration_pairs.json``: for one field,
the reference value, an answer value of the same meaning in other words, and a clearly
wrong one, over several domains) is graded by the grader through the session, like any
call (limits, retries, cache, cost, store), with its own prompt (``grade_fields``) and its
strict reading (a contradictory grade, ``exact`` with accuracy 0, is no grade). Each value
is graded in a call of its own: two calls per pair.

The result is a :class:`~qualspec.judges.Calibration` with ``role="grader"``:
**separation** is the share of pairs where the equal-meaning value got a strictly higher
accuracy than the wrong one. A grader that gives every field the same grade separates
nothing (0.00) and fails; below :data:`~qualspec.judges.SEPARATION_THRESHOLD` its grades
are not meaningful. Measured once per (grader model, prompt, parameters, pair set), then
cached in the store; a run with a field grader measures the first
:data:`DEFAULT_FIELD_PAIRS` pairs before it starts (unless ``--no-calibration``), and
``qualspec judge-check --grader MODEL`` measures the whole set.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from qualspec.judges._calibration import _subject, known_pairs, score_pairs
from qualspec.judges._calibration_result import (
    CACHE_KIND,
    Calibration,
    Scored,
    record_calibration,
)

if TYPE_CHECKING:
    from qualspec.engine import Calibrated, PlannedCalls, PrepareContext, Session
    from qualspec.errors import BudgetExceededError
    from qualspec.judges import FieldGrader  # the package's name: no file cycle
    from qualspec.spec import ProviderConfig
    from qualspec.store import Store

__all__ = [
    "DEFAULT_FIELD_PAIRS",
    "cached_grader_calibration",
    "calibrate_grader",
    "field_calibration_pairs",
]

DEFAULT_FIELD_PAIRS = 4
"""Pairs a run measures its field grader on before it starts (8 grader calls, once)."""


def field_calibration_pairs(limit: int | None = None) -> list[dict[str, str]]:
    """The built-in known field pairs; with ``limit``, the first taken across domains.

    Example:
        >>> len(field_calibration_pairs()) >= 10, len(field_calibration_pairs(4))
        (True, 4)
    """
    return known_pairs("field_calibration_pairs.json", limit)


def _cache_key(grader: FieldGrader, pairs: Sequence[Mapping[str, str]], repeats: int) -> str:
    _, prompt = grader.prompt()
    text = json.dumps(
        [grader.model, prompt, grader.params, list(pairs), repeats, "field-grader"],
        sort_keys=True,
    )
    return "fcal-" + hashlib.sha256(text.encode()).hexdigest()[:27]


def cached_grader_calibration(
    store: Store, grader: FieldGrader, *, pairs: int | None = None, repeats: int = 1
) -> Calibration | None:
    """A calibration measured before for this grader, prompt, parameters and pair set."""
    key = _cache_key(grader, field_calibration_pairs(pairs), repeats)
    entry = store.cache_get_many([key]).get(key)
    if entry is None or not entry.text:
        return None
    return Calibration.from_json(entry.text)


async def calibrate_grader(
    session: Session,
    grader: FieldGrader,
    *,
    pairs: int | None = None,
    repeats: int = 1,
    providers: Mapping[str, ProviderConfig] | None = None,
) -> Calibration:
    """Have ``grader`` grade the known field pairs (the first ``pairs`` across domains, or
    all), ``repeats`` times each; cached in the store once measured.

    Example::

        async with Session() as session:
            grader = FieldGrader(name="g", model="openai/gpt-4o-mini", fields={})
            print((await calibrate_grader(session, grader)).verdict)
    """
    from qualspec.judges._field_rules import FieldGrade
    from qualspec.judges._session_context import SessionContext

    chosen = field_calibration_pairs(pairs)
    store = session.store
    key = _cache_key(grader, chosen, repeats)
    entry = (await asyncio.to_thread(store.cache_get_many, [key])).get(key)
    if entry is not None and entry.text:
        return Calibration.from_json(entry.text)
    errors: list[str] = []

    async def grade(value: str, pair: Mapping[str, str], repeat: int) -> Scored:
        item = _subject(pair["question"], value, pair["field"]).items[0]
        name = pair["field"]
        # a repeat is a fresh call (its own cache key), a re-ask within it too
        context = SessionContext(
            session, attempt_offset=100 * repeat, kind=CACHE_KIND, providers=providers
        )
        found, _raw, error = await grader._ask(
            item, [name], {name: pair["reference"]}, {name: value}, context
        )
        if error is not None:
            return None, " ".join(error.split())[:160]
        got = found.get(name)
        return (got.accuracy if isinstance(got, FieldGrade) else None), None

    results = await score_pairs(chosen, repeats, grade, errors)
    _, prompt = grader.prompt()
    return await record_calibration(
        store,
        key,
        grader.model or "",
        prompt,
        results,
        repeats=repeats,
        errors=errors,
        role="grader",
    )


def planned_grader_calibration(
    grader: FieldGrader, *, calibrate: bool, calibrated: Calibrated | None
) -> list[PlannedCalls]:
    """The calls :func:`prepare_grader_calibration` plans (the field grader's
    ``planned_preparation``): the first :data:`DEFAULT_FIELD_PAIRS` known field pairs, one
    call per value (two per pair), each re-asked up to the grader's ``parse_retries``
    times; none when calibration is off or a measurement is cached."""
    from qualspec.engine import (
        CHARS_PER_TOKEN,
        JUDGE_OUTPUT_TOKENS,
        JUDGE_PROMPT_TOKENS,
        PlannedCalls,
    )

    if not calibrate or grader.model is None:  # the run measures only a grader with a model
        return []
    if calibrated is not None and calibrated(grader, DEFAULT_FIELD_PAIRS):
        return []
    chosen = field_calibration_pairs(DEFAULT_FIELD_PAIRS)
    calls = 2 * len(chosen)
    text = sum(
        2 * (len(p["question"]) + len(p["field"]) + len(p["reference"]))
        + len(p["good"])
        + len(p["bad"])
        for p in chosen
    )
    per_call = JUDGE_PROMPT_TOKENS + text // max(calls, 1) // CHARS_PER_TOKEN
    return [
        PlannedCalls(
            calls,
            per_call,
            JUDGE_OUTPUT_TOKENS,
            max(grader.parse_retries, 0),
            kind="calibration",
            model=grader.model,
            pairs=len(chosen),
            role="grader",
            key=repr(("grader", grader.model, sorted(grader.params.items()))),
        )
    ]


async def prepare_grader_calibration(
    grader: FieldGrader, ctx: PrepareContext
) -> dict[str, Any] | None:
    """The field grader's ``prepare``: its separation on known field pairs (equal-meaning
    values against wrong ones), for the run's metadata (``judge_calibration``).

    The whole set's measurement (``qualspec judge-check --grader``) when the store holds
    one, else the first :data:`DEFAULT_FIELD_PAIRS` measured now (then cached), recorded
    as a run of its own, ``grader calibration MODEL``. Nothing without ``ctx.calibrate``.
    """
    from qualspec.judges._calibration import _summary

    if not ctx.calibrate or grader.model is None:
        return None
    key = _cache_key(grader, field_calibration_pairs(DEFAULT_FIELD_PAIRS), 1)
    found = await ctx.once(key, lambda: _measure(grader, ctx))
    if isinstance(found, Exception):
        ctx.warn(f"grader {grader.model}: not calibrated: {found}")
        return None
    return _summary(found, ctx)


async def _measure(
    grader: FieldGrader, ctx: PrepareContext
) -> Calibration | BudgetExceededError | None:
    from qualspec.errors import BudgetExceededError

    store = ctx.session.store
    found = await asyncio.to_thread(cached_grader_calibration, store, grader)
    if found is None:
        found = await asyncio.to_thread(
            cached_grader_calibration, store, grader, pairs=DEFAULT_FIELD_PAIRS
        )
    if found is None:  # measured once, then cached
        # its calls are a run of its own, named for what it is (runs list)
        described = {
            "kind": "grader_calibration",
            "grader": grader.model,
            "pairs": DEFAULT_FIELD_PAIRS,
        }
        try:
            async with ctx.session.recording(f"grader calibration {grader.model}", described):
                await ctx.ready()  # its calls go alongside the run's
                found = await calibrate_grader(
                    ctx.session, grader, pairs=DEFAULT_FIELD_PAIRS, providers=ctx.providers
                )
        except BudgetExceededError as exc:
            return exc
    return found
