"""Resume lookups: the run to resume, and what of a run's recorded rows the plan no longer
asks for (superseded)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from qualspec.engine._evaluators import evaluates
from qualspec.errors import ConfigError

if TYPE_CHECKING:
    from qualspec.engine._evaluators import Evaluator
    from qualspec.engine._items import WorkItem
    from qualspec.spec import LoadedSuite
    from qualspec.store import RunRecord, RunSummary, Store

__all__ = ["find_run", "superseded", "superseded_streamed"]


def find_run(store: Store, resume: str | bool, suite: LoadedSuite) -> RunSummary:
    """The run to resume: ``resume`` (an id, which must be a run of ``suite``), or the
    latest unfinished run of ``suite`` (its name and its file or content)."""
    name, path, content = suite.evaluation.name, str(suite.path), suite.content_hash
    if isinstance(resume, str):
        summary = store.get_run(resume)
        if not summary.is_of_suite(name, path, content):
            other = summary.metadata.get("suite_path")
            where = f" ({other})" if isinstance(other, str) else ""
            raise ConfigError(
                f"run {summary.id} is a run of another suite ('{summary.suite_name}'{where}), "
                f"not of '{name}' ({path}): resume it with its own suite file, or run "
                "without --resume"
            )
        return summary
    run_id = store.latest_unfinished_run(name, path, content)
    if run_id is None:
        raise ConfigError(
            f"no unfinished run of suite '{name}' ({path}) to resume: run without --resume"
        )
    return store.get_run(run_id)


def superseded(
    record: RunRecord,
    items: Sequence[WorkItem],
    evaluators: Sequence[Evaluator] | None,
    *,
    groups: bool,
) -> tuple[set[str], set[tuple[str, str, str]]]:
    """The keys of a run's current rows that the plan does not ask for.

    Responses whose key is no work item's; evaluation records of a superseded or
    unplanned response (or group member), of an evaluator the run no longer has, made
    with another model or threshold than the evaluator's, or on an aspect (criterion)
    that the evaluator no longer records for that subject. ``evaluators`` is None when
    judging is off: evaluation records then stay unless their responses went. Group
    records are checked against the subjects of the answers recorded so far only with
    ``groups`` (at the end of a run: a subject's key follows the members answered).
    """
    from qualspec.engine._evaluators import group_subject_key

    wanted = {item.key: item for item in items}
    stale = {r.key for r in record.responses if r.key not in wanted}
    by_name = {e.name: e for e in evaluators or ()}
    subjects: dict[tuple[str, str], tuple[WorkItem, ...]] = {}
    if groups:
        answered = {r.key for r in record.responses if r.error is None and r.key in wanted}
        for e in by_name.values():
            if e.scope != "group":
                continue
            members: dict[str, list[WorkItem]] = {}
            for item in items:
                group_id = e.group_of(item)
                if group_id is not None and evaluates(e, item):
                    members.setdefault(group_id, []).append(item)
            for group in members.values():
                keys = [i.key for i in group if i.key in answered]
                if keys:
                    subjects[(e.name, group_subject_key(e.name, keys))] = tuple(group)
    stale_e: set[tuple[str, str, str]] = set()
    for j in record.judgments:
        key = (j.evaluator, j.response_key, j.criterion)
        subject = j.subject if j.subject is not None else [j.response_key]
        if any(m in stale or m not in wanted for m in subject):
            stale_e.add(key)
            continue
        if evaluators is None:
            continue
        evaluator = by_name.get(j.evaluator)
        if (
            evaluator is None
            or j.judge_model != evaluator.model
            or j.threshold != evaluator.threshold
        ):
            stale_e.add(key)
        elif evaluator.scope == "response":
            item = wanted[j.response_key]
            if not evaluates(evaluator, item) or j.criterion not in evaluator.aspects((item,)):
                stale_e.add(key)
        elif groups:
            planned = subjects.get((j.evaluator, j.response_key))
            if planned is None or j.criterion not in evaluator.aspects(planned):
                stale_e.add(key)
    return stale, stale_e


def superseded_streamed(
    store: Store,
    run_id: str,
    items: Iterable[WorkItem],
    evaluators: Sequence[Evaluator] | None,
) -> tuple[set[str], set[tuple[str, str, str]]] | None:
    """:func:`superseded` (``groups=False``) for a run of any size, reading the plan and
    the store a batch at a time; None when some recorded answer is not in the plan (an
    edited suite, other filters): then the run is read whole (:func:`superseded`).

    When every recorded answer is a work item, no answer is stale and every group's
    members are in the plan: what remains are evaluation records of an evaluator the
    run no longer has (or with another model or threshold), and answer records on an
    aspect the evaluator no longer records for that item.
    """
    from qualspec.engine._blocks import batches

    recorded = store.run_counts(run_id)["responses"]
    by_name = {e.name: e for e in evaluators or ()}
    stale_e: set[tuple[str, str, str]] = set()
    matched = 0
    for batch in batches(items, 500):
        wanted = {item.key: item for block in batch for item in block.items}
        matched += len(store.present_keys(run_id, wanted))
        if evaluators is None:
            continue
        for j in store.judgments_of(run_id, wanted):
            if j.subject is not None:
                continue  # a group's: below
            evaluator = by_name.get(j.evaluator)
            item = wanted[j.response_key]
            if (
                evaluator is None
                or j.judge_model != evaluator.model
                or j.threshold != evaluator.threshold
                or (
                    evaluator.scope == "response"
                    and (
                        not evaluates(evaluator, item)
                        or j.criterion not in evaluator.aspects((item,))
                    )
                )
            ):
                stale_e.add((j.evaluator, j.response_key, j.criterion))
    if matched != recorded:
        return None
    if evaluators is not None:
        for name, key, aspect, model, threshold in store.group_judgments(run_id):
            evaluator = by_name.get(name)
            if evaluator is None or model != evaluator.model or threshold != evaluator.threshold:
                stale_e.add((name, key, aspect))
    return set(), stale_e
