"""Evaluators used by the engine tests, named in suites as ``helpers_evaluators:FACTORY``.

``GroupProbe`` is a group-scope evaluator that records, when it runs, which answers of
its group existed in the store's view of the run at that moment (through ``seen``): the
proof that it waited for the whole group.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qualspec import EvalContext, EvaluatorConfig, Subject, Verdict
from qualspec.engine import Scope, WorkItem

SEEN: list[dict[str, Any]] = []


class GroupProbe:
    scope: Scope = "group"
    model: str | None = None

    def __init__(self, name: str, threshold: float) -> None:
        self.name = name
        self.threshold: float | None = threshold

    def prompt(self) -> tuple[str, str] | None:
        return ("group_probe", "compare the answers of one scenario")

    def group_of(self, item: WorkItem) -> str | None:
        return item.scenario

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        return ("all answered",)

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        SEEN.append(
            {
                "group": subject.group,
                "keys": [i.key for i in subject.items],
                "texts": [r.text for r in subject.responses],
                "prompt_version": ctx.prompt_version,
            }
        )
        return Verdict(
            score=10.0,
            scores={r.key: float(len(r.text or "")) for r in subject.responses},
            details={"answers": len(subject.responses)},
        )


def group_probe(config: EvaluatorConfig) -> GroupProbe:
    return GroupProbe(config.label, config.threshold)


class Exploding:
    """A response-scope evaluator whose code raises: the run must record it and go on."""

    scope: Scope = "response"
    model: str | None = None
    threshold: float | None = None
    name = "exploding"

    def prompt(self) -> tuple[str, str] | None:
        return None

    def group_of(self, item: WorkItem) -> str | None:
        return None

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        return ("boom",)

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        raise ValueError("a bug in a plugin")


def exploding(config: EvaluatorConfig) -> Exploding:
    return Exploding()


class ReferenceProbe:
    """A response-scope evaluator that reads its subject's dependencies (the reference
    answer of the candidate's input) and records what it got: no model call."""

    scope: Scope = "response"
    model: str | None = None
    threshold: float | None = None

    def __init__(self, name: str) -> None:
        self.name = name

    def prompt(self) -> tuple[str, str] | None:
        return None

    def group_of(self, item: WorkItem) -> str | None:
        return None

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        return ("matches the reference",)

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        (answer,) = subject.responses
        refs = list(subject.dependencies.values())
        same = bool(refs) and all(r.text == answer.text for r in refs)
        return Verdict(
            score=10.0 if same else 0.0,
            details={
                "references": {r.key: r.text for r in refs},
                "kinds": sorted({r.kind for r in refs}),
                "depends_on": list(subject.items[0].depends_on),
            },
        )


def reference_probe(config: EvaluatorConfig) -> ReferenceProbe:
    probe = ReferenceProbe(config.label)
    if "kinds" in config.options:  # the optional attribute: which kinds of items it sees
        probe.kinds = tuple(config.options["kinds"])  # type: ignore[attr-defined]
    return probe
