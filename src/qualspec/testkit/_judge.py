"""One judged assertion: a response scored on a criterion by the criteria judge, through a
session (limits, retries, cache, cost, store); what the pytest plugin's ``qualspec_judge``
calls."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.judges import SessionContext

if TYPE_CHECKING:
    from qualspec.engine import CallOptions, Reply, Session
    from qualspec.providers import Message

__all__ = ["JudgeResult", "ajudge_response", "judge_response"]


@dataclass(frozen=True)
class JudgeResult:
    """A judge's verdict on one response: ``passed`` is ``score >= threshold``.

    Its ``repr`` (what a failed ``assert result.passed`` prints) shows, on one line, the
    score against the threshold, the criteria and the judge's reasoning; :meth:`explain`
    says the same in a few lines (``assert result.passed, result.explain()``). ``error`` is
    set when the judge could not be asked (a failed call, or a call not recorded when
    replaying).
    """

    criteria: str
    score: float | None
    threshold: float
    reasoning: str | None
    model: str
    unscored_reason: str | None = None
    error: str | None = None
    cached: bool = False

    @property
    def passed(self) -> bool:
        """Whether the score reaches the threshold (never when unscored)."""
        return self.score is not None and self.score >= self.threshold

    def __bool__(self) -> bool:
        return self.passed

    def explain(self) -> str:
        """The verdict in a few lines: criteria, score, threshold, reasoning."""
        if self.error is not None:
            verdict = f"NOT JUDGED ({self.error})"
        elif self.score is None:
            verdict = f"UNSCORED ({self.unscored_reason or 'no score could be read'})"
        else:
            word = "PASSED" if self.passed else "FAILED"
            sign = ">=" if self.passed else "<"
            verdict = f"{word}: score {self.score:g} {sign} threshold {self.threshold:g}"
        lines = [
            f"qualspec judge {self.model}: {verdict}",
            f"  criteria: {self.criteria}",
            f"  score: {'-' if self.score is None else f'{self.score:g}'}/10",
            f"  reasoning: {self.reasoning or '-'}",
        ]
        return "\n".join(lines)

    def __repr__(self) -> str:
        """One line (pytest shows it in a failed assertion): verdict, criteria, reasoning."""
        lines = self.explain().splitlines()
        head = lines[0].removeprefix(f"qualspec judge {self.model}: ")
        reasoning = self.reasoning or "-"
        return (
            f"<JudgeResult {head} | criteria: {self.criteria!r} | reasoning: {reasoning!r} "
            f"| judge {self.model}>"
        )


class _SessionContext(SessionContext):
    """The evaluator context of a judged assertion: the session's calls, counted."""

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.calls = 0
        self.cached = 0

    async def call(
        self, model: str, messages: Sequence[Message], *, kind: str, options: CallOptions
    ) -> Reply:
        reply = await super().call(model, messages, kind=kind, options=options)
        self.calls += 1
        self.cached += int(reply.cached)
        return reply


async def ajudge_response(
    session: Session,
    response: str,
    criteria: str,
    *,
    model: str | None = None,
    threshold: float | None = None,
    prompt: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> JudgeResult:
    """Score ``response`` (to ``prompt``, when given) on ``criteria`` 0-10 with the
    criteria judge (``model``, default the suites' default judge) in ``session``."""
    from qualspec.engine import Reply, Subject, WorkItem
    from qualspec.judges import CriteriaJudge
    from qualspec.providers import Message
    from qualspec.spec import DEFAULT_JUDGE_MODEL, DEFAULT_THRESHOLD
    from qualspec.store import ResponseRecord, Usage

    model = model or DEFAULT_JUDGE_MODEL
    threshold = DEFAULT_THRESHOLD if threshold is None else float(threshold)
    judge = CriteriaJudge(name="qualspec_judge", model=model, threshold=threshold, params=params)
    messages = (Message("user", prompt),) if prompt else ()
    item = WorkItem(
        key="qualspec_judge",
        call_key="",
        candidate="pytest",
        role=None,
        scenario="",
        input_id=None,
        temperature=None,
        run_index=0,
        provider="",
        model="",
        messages=messages,
        params={},
        criteria=(criteria,),
    )
    # the answer judged, as a record of no call (``Usage()``: nothing measured)
    answer = Reply(text=response, usage=Usage())
    record = ResponseRecord.from_reply(
        answer, key="qualspec_judge", candidate="pytest", provider="", model=""
    )
    ctx = _SessionContext(session)
    verdict = await judge.evaluate(Subject(item.key, (item,), (record,)), criteria, ctx)
    return JudgeResult(
        criteria=criteria,
        score=verdict.score,
        threshold=threshold,
        reasoning=verdict.reasoning,
        model=model,
        unscored_reason=verdict.unscored_reason,
        error=verdict.error,
        cached=ctx.calls > 0 and ctx.calls == ctx.cached,
    )


def judge_response(
    response: str,
    criteria: str,
    *,
    model: str | None = None,
    threshold: float | None = None,
    prompt: str | None = None,
    db: str | None = None,
) -> JudgeResult:
    """:func:`ajudge_response` in a session of its own (synchronous).

    Example::

        result = judge_response("Paris.", "Names the capital of France", threshold=7)
        assert result.passed, result.explain()
    """
    from qualspec.engine import Session, run_sync

    async def main() -> JudgeResult:
        async with Session(db=db) as session:
            return await ajudge_response(
                session, response, criteria, model=model, threshold=threshold, prompt=prompt
            )

    return run_sync(main)
