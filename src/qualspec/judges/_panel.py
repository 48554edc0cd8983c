"""A panel of criteria judges: every member scores each (answer, criterion) on its own
through the engine (its own limits, cache, cost and calibration); the scores combine by
``median``, ``mean``, ``min`` or a ``majority`` of pass/fail votes.

The judgment keeps the combined score, and every member under ``details["panel"]`` as
``{"judge", "model", "score", "passed", "reasoning", "unscored_reason"}``. A member that
gives no score (unreadable output or a failed call) is left out of the combination and
counted (``details["panel_unscored"]``), never read as 0; when no member scores, the
judgment is unscored (an error when a call failed, so that resume asks again).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from qualspec.judges._panel_scores import MemberScore, combine_scores

if TYPE_CHECKING:
    from qualspec.engine import (
        Calibrated,
        EvalContext,
        PlannedCalls,
        PrepareContext,
        Reply,
        Scope,
        Subject,
        Verdict,
        WorkItem,
    )
    from qualspec.judges import CriteriaJudge  # the package's name: no file cycle
    from qualspec.providers import Message

__all__ = ["PanelJudge", "panel_members"]


class _MemberContext:
    """A member's view of the evaluation's context: its calls go through the engine as
    usual, and what they cost is added up for the member."""

    def __init__(self, inner: EvalContext) -> None:
        self._inner = inner
        self.run_id = inner.run_id
        self.prompt_version = inner.prompt_version
        self.calls = 0
        self.cached = 0
        self.cost_usd = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def complete(self, model: str, messages: Sequence[Message], **kw: Any) -> Reply:
        reply = await self._inner.complete(model, messages, **kw)
        self.calls += 1
        self.cached += int(reply.cached)
        self.cost_usd += reply.cost_usd or 0.0
        return reply


class PanelJudge:
    """Several criteria judges whose scores combine (see the module docstring).

    ``model`` is the first member's (what the run checks and records as the judge's
    model); ``models`` every member's. Example::

        PanelJudge(name="criteria", members=[("a", judge_a), ("b", judge_b)],
                   combine="median", threshold=7)
    """

    scope: Scope = "response"
    kinds: Sequence[str] = ("candidate",)
    uses_dependencies = False  # judges the answer alone, as its members do
    scores_criteria = True  # its aspects are each answer's criteria

    def __init__(
        self,
        *,
        name: str,
        members: Sequence[tuple[str, CriteriaJudge]],
        combine: str,
        threshold: float,
    ) -> None:
        first = members[0][1]
        self.name = name
        self.model: str | None = first.model
        self.threshold: float | None = threshold
        self.params: dict[str, Any] = {}
        self.parse_retries = first.parse_retries
        self.mode = first.mode
        self.calibrate_pairs = first.calibrate_pairs
        self.members = tuple(members)
        self.combine = combine
        self.models = tuple(dict.fromkeys(j.model for _, j in members if j.model))

    @property
    def label(self) -> str:
        """``panel median of a, b, c``: how reports name the combined panel."""
        return f"panel {self.combine} of {', '.join(n for n, _ in self.members)}"

    def group_of(self, item: WorkItem) -> str | None:
        """Not a group evaluator."""
        return None

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        """The criteria that apply to the answer (every member's)."""
        return self.members[0][1].aspects(items)

    def prompt(self) -> tuple[str, str]:
        """The members' template, with the panel (members, models, combination) appended:
        a changed panel is a new prompt version (its old judgments are not reused)."""
        name, text = self.members[0][1].prompt()
        who = "; ".join(f"{n}={j.model} {sorted(j.params.items())}" for n, j in self.members)
        return name, f"{text}\n\n[panel] combine={self.combine}; {who}\n"

    def planned_calls(self, items: Sequence[WorkItem]) -> Sequence[PlannedCalls]:
        """Every member's calls, each priced as its own model's."""
        import dataclasses

        return [
            dataclasses.replace(p, model=p.model or judge.model)
            for _, judge in self.members
            for p in judge.planned_calls(items)
        ]

    def planned_preparation(
        self, *, calibrate: bool, calibrated: Calibrated | None
    ) -> Sequence[PlannedCalls]:
        """Every member's calibration (the combined panel's reuses their scores)."""
        return [
            p
            for _, judge in self.members
            for p in judge.planned_preparation(calibrate=calibrate, calibrated=calibrated)
        ]

    async def prepare(self, ctx: PrepareContext) -> dict[str, Any] | None:
        """Each member's calibration, and the combined panel's from their scores."""
        from qualspec.judges._panel_calibration import prepare_panel_calibration

        return await prepare_panel_calibration(self, ctx)

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """Every member's verdict at once, combined."""
        contexts = [_MemberContext(ctx) for _ in self.members]
        verdicts = await asyncio.gather(
            *(
                judge.evaluate(subject, aspect, c)
                for (_, judge), c in zip(self.members, contexts, strict=True)
            )
        )
        return self.combined(verdicts, contexts)

    def combined(self, verdicts: Sequence[Verdict], contexts: Sequence[Any] = ()) -> Verdict:
        """The panel's verdict from its members' (in member order)."""
        from qualspec.engine import Verdict

        threshold = self.threshold if self.threshold is not None else 7.0
        members = [
            _member_score(name, judge.model or "", verdict, threshold)
            for (name, judge), verdict in zip(self.members, verdicts, strict=True)
        ]
        scored = [m for m in members if m.score is not None]
        score, passed = combine_scores(
            self.combine, [m.score for m in scored if m.score is not None], threshold
        )
        details: dict[str, Any] = {
            "panel": [m.as_dict() for m in members],
            "panel_unscored": len(members) - len(scored),
            "combine": self.combine,
        }
        if contexts:
            details["panel_usage"] = {
                m.judge: {"calls": c.calls, "cached": c.cached, "cost_usd": round(c.cost_usd, 8)}
                for m, c in zip(members, contexts, strict=True)
            }
        raw = "\n".join(
            f"[{m.judge}] {v.raw_text or ''}" for m, v in zip(members, verdicts, strict=True)
        )
        if score is None:
            errors = [v.error for v in verdicts if v.error]
            first = next((m.unscored_reason for m in members if m.unscored_reason), None)
            if errors and len(errors) == len(verdicts):
                return Verdict(error=errors[0], raw_text=raw, details=details)
            why = f"no judge of the panel scored ({first})" if first else "no judge scored"
            return Verdict(unscored_reason=why, raw_text=raw, details=details)
        details["spread"] = [min(m.score for m in scored), max(m.score for m in scored)]  # type: ignore[type-var]
        return Verdict(
            score=score,
            passed=passed,
            reasoning=_summary(self.combine, score, scored, len(members) - len(scored)),
            raw_text=raw,
            details=details,
        )


def _member_score(name: str, model: str, verdict: Verdict, threshold: float) -> MemberScore:
    if verdict.error:
        why: str | None = f"judge call failed: {verdict.error}"
    else:
        why = verdict.unscored_reason if verdict.score is None else None
    score = None if verdict.error else verdict.score
    passed = verdict.passed if verdict.passed is not None else None
    if passed is None and score is not None:
        passed = score >= threshold
    return MemberScore(name, model, score, passed, verdict.reasoning, why)


def _summary(combine: str, score: float, scored: Sequence[MemberScore], unscored: int) -> str:
    """``median 7 of 3 judges (6-8); mini: <its reasoning>``: the reasoning of the member
    closest to the combined score."""
    values = [m.score for m in scored if m.score is not None]
    low, high = min(values), max(values)
    closest = min(scored, key=lambda m: abs((m.score or 0.0) - score))
    spread = f"{low:g}-{high:g}" if low != high else f"all {low:g}"
    head = f"{combine} {score:g} of {len(scored)} judges ({spread})"
    if unscored:
        head += f"; {unscored} more gave no score"
    return f"{head}; {closest.judge}: {closest.reasoning}" if closest.reasoning else head


def panel_members(
    config_panel: Sequence[Any], build: Any, params: Mapping[str, Any]
) -> list[tuple[str, CriteriaJudge]]:
    """``(label, judge)`` of each panel member: ``build(name, model, params)`` makes its
    judge, with the entry's parameters over the panel's."""
    return [(m.label, build(m.label, m.model, {**params, **m.params})) for m in config_panel]
