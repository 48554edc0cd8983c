"""Judge calibration: does the judge score a clearly good answer above a clearly bad one?

A built-in set of known pairs (``data/calibration_pairs.json``: for one question and one
criterion, a good answer and a bad one, over several domains) is scored by the judge through
the session, like any call (limits, retries, cache, cost, store). The result:

* **separation**: the share of pairs where the good answer scored strictly higher (a pair
  with an unscored answer counts as not separated, and is counted apart);
* **mean gap**: good minus bad, over pairs where both were scored;
* **spread**: with repeats, the mean standard deviation of the scores of one answer.

Below :data:`SEPARATION_THRESHOLD` the judge's scores are not meaningful, and runs that use
it say so. A result is cached in the store per (judge model, judge prompt, parameters, pair
set), so it is measured once; the judge calls themselves are cached too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

from qualspec.judges._calibration_result import (
    CACHE_KIND,
    DEFAULT_PAIRS,
    SEPARATION_THRESHOLD,
    Calibration,
    PairScores,
    Scored,
    record_calibration,
)

if TYPE_CHECKING:
    from qualspec.engine import Calibrated, PlannedCalls, PrepareContext, Session
    from qualspec.errors import BudgetExceededError
    from qualspec.judges import CriteriaJudge  # the package's name: no file cycle
    from qualspec.spec import ProviderConfig
    from qualspec.store import Store

__all__ = [
    "DEFAULT_PAIRS",
    "SEPARATION_THRESHOLD",
    "Calibration",
    "PairScores",
    "cached_calibration",
    "calibrate",
    "calibration_calls",
    "calibration_pairs",
    "measured_calibration",
]


async def score_pairs(
    chosen: Sequence[Mapping[str, str]],
    repeats: int,
    score: Callable[[str, Mapping[str, str], int], Awaitable[Scored]],
    errors: list[str],
) -> list[PairScores]:
    """Each known pair's good and bad answer scored ``repeats`` times by ``score(answer,
    pair, repeat)``, every call at once (the session's limits still apply); the errors are
    appended to ``errors`` in pair order."""
    import asyncio

    calls = [
        score(p[side], p, r) for p in chosen for side in ("good", "bad") for r in range(repeats)
    ]
    tasks = [asyncio.ensure_future(c) for c in calls]
    try:
        done = await asyncio.gather(*tasks)
    except BaseException:  # the first exception cancels the others
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    errors.extend(error for _, error in done if error is not None)
    scores = [value for value, _ in done]
    return [
        PairScores(
            pair["id"],
            pair["domain"],
            scores[2 * i * repeats : (2 * i + 1) * repeats],
            scores[(2 * i + 1) * repeats : (2 * i + 2) * repeats],
        )
        for i, pair in enumerate(chosen)
    ]


def calibration_pairs(limit: int | None = None) -> list[dict[str, str]]:
    """The built-in known pairs; with ``limit``, the first pairs taken across domains.

    Example:
        >>> len(calibration_pairs()) >= 20, len(calibration_pairs(6))
        (True, 6)
    """
    return known_pairs("calibration_pairs.json", limit)


def known_pairs(file: str, limit: int | None = None) -> list[dict[str, str]]:
    """The known pairs of ``file`` in ``qualspec.data``; with ``limit``, the first pairs
    taken across domains (round robin), so that a few pairs still cover every domain."""
    text = resources.files("qualspec.data").joinpath(file).read_text()
    pairs: list[dict[str, str]] = json.loads(text)["pairs"]
    if limit is None or limit >= len(pairs):
        return pairs
    by_domain: dict[str, list[dict[str, str]]] = {}
    for pair in pairs:
        by_domain.setdefault(pair["domain"], []).append(pair)
    picked: list[dict[str, str]] = []
    while len(picked) < limit:  # round robin over domains
        for group in by_domain.values():
            if group and len(picked) < limit:
                picked.append(group.pop(0))
    return picked


def calibration_calls(pairs: int | None = None, repeats: int = 1) -> int:
    """The judge calls a calibration on ``pairs`` known pairs makes, before parse retries:
    one per answer (a good and a bad one per pair), ``repeats`` times.

    Each can be asked again up to the judge's ``parse_retries`` times (what ``--dry-run``
    counts as the most).

    Example:
        >>> calibration_calls(8)
        16
    """
    return 2 * len(calibration_pairs(pairs)) * max(repeats, 1)


def _cache_key(judge: CriteriaJudge, pairs: Sequence[Mapping[str, str]], repeats: int) -> str:
    _, prompt = judge.prompt()
    text = json.dumps(
        [judge.model, prompt, judge.params, judge.mode, list(pairs), repeats], sort_keys=True
    )
    return "cal-" + hashlib.sha256(text.encode()).hexdigest()[:28]


def cached_calibration(
    store: Store, judge: CriteriaJudge, *, pairs: int | None = None, repeats: int = 1
) -> Calibration | None:
    """A calibration measured before for this judge, prompt, parameters and pair set."""
    key = _cache_key(judge, calibration_pairs(pairs), repeats)
    entry = store.cache_get_many([key]).get(key)
    if entry is None or not entry.text:
        return None
    return Calibration.from_json(entry.text)


def _subject(question: str, answer: str, criterion: str, key: str = "calibration") -> Any:
    from qualspec.engine import Reply, Subject, WorkItem
    from qualspec.providers import Message
    from qualspec.store import ResponseRecord, Usage

    item = WorkItem(
        key="calibration",
        call_key="calibration",
        candidate="calibration",
        role=None,
        scenario="calibration",
        input_id=None,
        temperature=0.0,
        run_index=0,
        provider="calibration",
        model="calibration",
        messages=(Message("user", question),),
        params={},
        criteria=(criterion,),
    )
    # the known answer, as a record of no call (``Usage()``: nothing measured)
    answer_reply = Reply(text=answer, effective_temperature=0.0, usage=Usage())
    response = ResponseRecord.from_reply(
        answer_reply,
        key="calibration",
        candidate="calibration",
        scenario="calibration",
        temperature=0.0,
        provider="calibration",
        model="calibration",
    )
    # ``key``: the subject's own (calls made at once must not share an all-criteria verdict)
    return Subject(key=key, items=(item,), responses=(response,))


async def calibrate(
    session: Session,
    judge: CriteriaJudge,
    *,
    pairs: int | None = None,
    repeats: int = 1,
    providers: Mapping[str, ProviderConfig] | None = None,
) -> Calibration:
    """Have ``judge`` score the known pairs (the first ``pairs`` across domains, or all),
    ``repeats`` times each; cached in the store once measured. ``providers``: named
    provider connections (a suite's ``providers:``) for the judge's address.

    Example::

        async with Session() as session:
            result = await calibrate(session, CriteriaJudge(name="j", model="openai/gpt-4o-mini",
                                                            threshold=7))
            print(result.verdict)
    """
    import asyncio

    from qualspec.judges._session_context import SessionContext

    chosen = calibration_pairs(pairs)
    store = session.store
    key = _cache_key(judge, chosen, repeats)
    entry = (await asyncio.to_thread(store.cache_get_many, [key])).get(key)
    if entry is not None and entry.text:
        return Calibration.from_json(entry.text)

    async def score(answer: str, pair: Mapping[str, str], repeat: int) -> Scored:
        subject = _subject(
            pair["question"],
            answer,
            pair["criterion"],
            f"calibration {pair['id']} {answer} {repeat}",
        )
        # a repeat is a fresh call (its own cache key and seed), a re-ask within it too
        context = SessionContext(
            session, attempt_offset=100 * repeat, kind=CACHE_KIND, providers=providers
        )
        verdict = await judge.evaluate(subject, pair["criterion"], context)
        if verdict.error:
            return None, " ".join(verdict.error.split())[:160]
        return verdict.score, None

    errors: list[str] = []

    results = await score_pairs(chosen, repeats, score, errors)
    _, prompt = judge.prompt()
    return await record_calibration(
        store, key, judge.model or "", prompt, results, repeats=repeats, errors=errors
    )


def planned_calibration(
    judge: CriteriaJudge, *, calibrate: bool, calibrated: Calibrated | None
) -> list[PlannedCalls]:
    """The calls :func:`prepare_calibration` plans for ``judge`` (the criteria judge's
    ``planned_preparation``): one per answer of its ``calibrate_pairs`` known pairs, each
    re-asked up to its ``parse_retries`` times; none when calibration is off, the pair
    count is 0, or a measurement is cached."""
    from qualspec.engine import (
        CHARS_PER_TOKEN,
        JUDGE_OUTPUT_TOKENS,
        JUDGE_PROMPT_TOKENS,
        PlannedCalls,
    )

    pairs = DEFAULT_PAIRS if judge.calibrate_pairs is None else judge.calibrate_pairs
    if not calibrate or judge.model is None or not pairs:
        return []
    if calibrated is not None and calibrated(judge, pairs):
        return []
    chosen = calibration_pairs(pairs)
    calls = calibration_calls(pairs)
    text = sum(len(p["question"]) + len(p["criterion"]) + len(p["good"]) for p in chosen)
    text += sum(len(p["question"]) + len(p["criterion"]) + len(p["bad"]) for p in chosen)
    per_call = JUDGE_PROMPT_TOKENS + text // max(calls, 1) // CHARS_PER_TOKEN
    same = repr((judge.model, judge.mode, sorted(judge.params.items()), pairs))
    retries = max(judge.parse_retries, 0)
    return [
        PlannedCalls(
            calls,
            per_call,
            JUDGE_OUTPUT_TOKENS,
            retries,
            kind="calibration",
            model=judge.model,
            pairs=len(chosen),
            key=same,
        )
    ]


async def prepare_calibration(judge: CriteriaJudge, ctx: PrepareContext) -> dict[str, Any] | None:
    """The criteria judge's ``prepare``: its separation on known pairs, for the run's
    metadata (``judge_calibration``).

    The full set's measurement (``qualspec judge-check``) when the store holds one, else
    the first ``calibrate: N`` pairs (default :data:`DEFAULT_PAIRS`, 0: none) measured now,
    once per judge model, prompt, parameters and pair count (judges alike share one), then
    cached; its calls are a run of their own, ``calibration MODEL``. A spent budget or a
    measurement that is not meaningful is a warning. Nothing without ``ctx.calibrate``.
    """
    return _summary(await measured_calibration(judge, ctx), ctx)


async def measured_calibration(judge: CriteriaJudge, ctx: PrepareContext) -> Calibration | None:
    """What :func:`prepare_calibration` summarizes: the judge's measurement (cached, or
    made now, once per judge alike); None without ``ctx.calibrate``, or when the budget
    stopped it (a warning says so)."""
    if not ctx.calibrate or judge.model is None:
        return None
    pairs = DEFAULT_PAIRS if judge.calibrate_pairs is None else judge.calibrate_pairs
    key = _cache_key(judge, calibration_pairs(pairs), 1)
    found = await ctx.once(key, lambda: _measure(judge, ctx, pairs))
    if isinstance(found, Exception):
        ctx.warn(f"judge {judge.model}: not calibrated: {found}")
        return None
    return found


def _summary(found: Calibration | None, ctx: PrepareContext) -> dict[str, Any] | None:
    if found is None:
        return None
    summary = found.summary()
    if not summary["meaningful"]:
        ctx.warn(summary["verdict"])
    return summary


async def _measure(
    judge: CriteriaJudge, ctx: PrepareContext, pairs: int
) -> Calibration | BudgetExceededError | None:
    import asyncio

    from qualspec.errors import BudgetExceededError

    store = ctx.session.store
    found = await asyncio.to_thread(cached_calibration, store, judge)
    if found is None and pairs:
        found = await asyncio.to_thread(cached_calibration, store, judge, pairs=pairs)
    if found is None and pairs:  # measured once, then cached
        # its calls are a run of their own, named for what it is (runs list)
        described = {"kind": "calibration", "judge": judge.model, "pairs": pairs}
        try:
            async with ctx.session.recording(f"calibration {judge.model}", described):
                await ctx.ready()  # its calls go alongside the run's
                found = await calibrate(ctx.session, judge, pairs=pairs, providers=ctx.providers)
        except BudgetExceededError as exc:
            return exc
    return found
