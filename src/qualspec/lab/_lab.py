"""``generate_answer``: write an answer, have it evaluated, feed the verdict back, repeat.

Generation and evaluation are separate calls through the engine (``Session.complete`` with
kinds ``lab`` and ``lab_eval``): limited, retried, cached, costed and recorded like every
other call, in a run of its own (suite ``(lab)``) whose metadata holds the request and the
result. The loop stops at the first answer scoring at least the threshold, or after
``iter_max`` rounds, and returns the best-scored answer, not the last.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from qualspec.errors import ConfigError
from qualspec.judges import AskResult, Read, ask_until_read
from qualspec.lab._models import (
    DEFAULT_ITER_MAX,
    DEFAULT_MODEL,
    DEFAULT_THRESHOLD,
    GenerateAnswerRequest,
    GenerateAnswerResponse,
    IterationData,
    LabEvaluation,
)
from qualspec.lab._prompts import (
    EVALUATION_SCHEMA,
    evaluation_messages,
    feedback_text,
    generation_messages,
    read_evaluation,
)

if TYPE_CHECKING:
    from qualspec.engine import Reply, Session
    from qualspec.spec import ProviderConfig

__all__ = [
    "LAB_SUITE",
    "IterationFn",
    "agenerate_answer",
    "best_iteration",
    "generate_answer",
    "request_from",
    "run_lab",
]

LAB_SUITE = "(lab)"
GENERATION_TEMPERATURE = 0.7
EVALUATION_MAX_TOKENS = 512
PARSE_RETRIES = 1

IterationFn = Callable[[IterationData], Awaitable[None] | None]
"""Called with each iteration as soon as it is evaluated (the web app streams it)."""


def request_from(**fields: Any) -> GenerateAnswerRequest:
    """The validated request, or a ``ConfigError`` naming the field and the fix."""
    try:
        return GenerateAnswerRequest(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "request"
        raise ConfigError(f"lab: {where}: {first['msg']}") from None


async def agenerate_answer(
    instruct: str,
    resp_format: str,
    eval_crit: str,
    iter_max: int = DEFAULT_ITER_MAX,
    score_threshold: float = DEFAULT_THRESHOLD,
    *,
    model: str | None = None,
    judge_model: str | None = None,
    session: Session | None = None,
    db: str | None = None,
    providers: Mapping[str, ProviderConfig] | None = None,
    max_tokens: int | None = None,
    judge_max_tokens: int = EVALUATION_MAX_TOKENS,
    temperature: float | None = GENERATION_TEMPERATURE,
    on_iteration: IterationFn | None = None,
) -> GenerateAnswerResponse:
    """Refine an answer until the evaluator scores it at least ``score_threshold`` (0-1).

    Example::

        result = await agenerate_answer(
            "Explain quantum computing", "3 paragraphs for high-school students",
            "Uses analogies, no jargon, one practical example", iter_max=5,
            score_threshold=0.85)
        print(result.final_answer, result.final_score, result.metadata["run_id"])

    Args:
        instruct: The question or task.
        resp_format: The form the answer must take.
        eval_crit: What the evaluator checks the answer against.
        iter_max: At most this many generate-and-evaluate rounds (1-10).
        score_threshold: The score (0-1) that accepts an answer.
        model: ``provider/model`` writing the answers (default ``local/smollm2``).
        judge_model: ``provider/model`` evaluating them (default: ``model``).
        session: An open session to make the calls with (default: one opened on ``db``
            with ``providers`` for this call).
        db: The database URL when no session is given.
        providers: Named provider connections (as a suite's ``providers:``).
        max_tokens: The generator's answer length limit (default: the provider's).
        judge_max_tokens: The evaluator's answer length limit.
        temperature: The generator's temperature (the evaluator's is 0).
        on_iteration: Called with each iteration once it is evaluated.

    Returns:
        The best answer, every iteration, and tokens, cost and latency in ``metadata``.

    Raises:
        ConfigError: An argument is out of range (the message names it).
    """
    request = request_from(
        instruct=instruct,
        resp_format=resp_format,
        eval_crit=eval_crit,
        iter_max=iter_max,
        score_threshold=score_threshold,
        model=model,
        judge_model=judge_model,
    )
    if session is None:
        from qualspec.engine import Session

        async with Session(db=db, providers=providers) as own:
            return await run_lab(
                own, request, max_tokens, judge_max_tokens, temperature, on_iteration, providers
            )
    return await run_lab(
        session, request, max_tokens, judge_max_tokens, temperature, on_iteration, providers
    )


def generate_answer(
    instruct: str,
    resp_format: str,
    eval_crit: str,
    iter_max: int = DEFAULT_ITER_MAX,
    score_threshold: float = DEFAULT_THRESHOLD,
    **options: Any,
) -> GenerateAnswerResponse:
    """The synchronous :func:`agenerate_answer` (same arguments); safe inside a running loop.

    Example::

        from qualspec.lab import generate_answer
        result = generate_answer(instruct="Explain quantum computing",
                                 resp_format="3 paragraphs for high-school students",
                                 eval_crit="Uses analogies, no jargon, one practical example",
                                 iter_max=5, score_threshold=0.85)
    """
    from qualspec.engine import run_sync

    return run_sync(
        lambda: agenerate_answer(
            instruct, resp_format, eval_crit, iter_max, score_threshold, **options
        )
    )


async def run_lab(
    session: Session,
    request: GenerateAnswerRequest,
    max_tokens: int | None = None,
    judge_max_tokens: int = EVALUATION_MAX_TOKENS,
    temperature: float | None = GENERATION_TEMPERATURE,
    on_iteration: IterationFn | None = None,
    providers: Mapping[str, ProviderConfig] | None = None,
    on_start: Callable[[str], Awaitable[None] | None] | None = None,
) -> GenerateAnswerResponse:
    """The Lab loop for a validated request, on an open session (a run of its own).

    ``on_start`` is called with the run's id before the first call (the web app names the
    run to the page at once, so a Lab stopped midway still links to its run)."""
    import asyncio

    model = request.model or DEFAULT_MODEL
    judge = request.judge_model or model
    described = {"kind": "lab", "lab": request.model_dump()}
    async with session.recording(LAB_SUITE, described) as run_id:
        if on_start is not None:
            started = on_start(run_id)
            if inspect.isawaitable(started):
                await started
        loop = _Loop(session, request, model, judge, providers)
        iterations: list[IterationData] = []
        feedback: str | None = None
        for number in range(1, request.iter_max + 1):
            iteration = await loop.iteration(
                number, feedback, max_tokens, judge_max_tokens, temperature
            )
            iterations.append(iteration)
            # the iterations so far, so that a Lab stopped midway still shows them
            progress = {"lab": {**request.model_dump(), "iterations": _dumped(iterations)}}
            await asyncio.to_thread(session.store.update_run_metadata, run_id, progress)
            if on_iteration is not None:
                pending = on_iteration(iteration)
                if inspect.isawaitable(pending):
                    await pending
            evaluation = iteration.evaluation
            if iteration.error is not None:
                break
            if evaluation is not None and evaluation.score >= request.score_threshold:
                break
            if evaluation is not None:
                feedback = feedback_text(evaluation)
        result = _result(iterations, request, run_id, model, judge)
        stored = {"lab": {**request.model_dump(), "result": result.model_dump()}}
        await asyncio.to_thread(session.store.update_run_metadata, run_id, stored)
    return result


def _dumped(iterations: list[IterationData]) -> list[dict[str, Any]]:
    return [i.model_dump(mode="json") for i in iterations]


class _Loop:
    def __init__(
        self,
        session: Session,
        request: GenerateAnswerRequest,
        model: str,
        judge: str,
        providers: Mapping[str, ProviderConfig] | None,
    ) -> None:
        self.session = session
        self.request = request
        self.model = model
        self.judge = judge
        self.providers = providers

    async def iteration(
        self,
        number: int,
        feedback: str | None,
        max_tokens: int | None,
        judge_max_tokens: int,
        temperature: float | None,
    ) -> IterationData:
        r = self.request
        replies: list[Reply] = []
        reply = await self.session.complete(
            self.model,
            generation_messages(r.instruct, r.resp_format, feedback),
            kind="lab",
            temperature=temperature,
            max_tokens=max_tokens,
            attempt=number - 1,  # a fresh sample each round, even with the same prompt
            providers=self.providers,
        )
        replies.append(reply)
        answer = (reply.text or "").strip()
        evaluation: LabEvaluation | None = None
        why: str | None = None
        error = reply.error
        if error is None:
            asked = await self._evaluate(answer, judge_max_tokens)
            replies.extend(asked.replies)
            evaluation, why = asked.value, asked.why
            if asked.error is not None:
                error = f"evaluation failed: {asked.error}"
        costs = [x.cost_usd for x in replies]
        return IterationData(
            iteration_number=number,
            answer=answer,
            evaluation=evaluation,
            unscored_reason=why if evaluation is None and error is None else None,
            error=error,
            input_tokens=sum(x.input_tokens or 0 for x in replies),
            output_tokens=sum(x.output_tokens or 0 for x in replies),
            cost_usd=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
            latency_s=sum(x.latency_s for x in replies),
        )

    async def _evaluate(self, answer: str, max_tokens: int) -> AskResult[LabEvaluation | None]:
        """The evaluator's verdict on ``answer``, asked again while it cannot be read."""
        r = self.request

        async def ask(attempt: int, note: str | None) -> Reply:
            return await self.session.complete(
                self.judge,
                evaluation_messages(r.instruct, r.resp_format, r.eval_crit, answer, note),
                kind="lab_eval",
                temperature=0.0,
                max_tokens=max_tokens,
                json_schema=EVALUATION_SCHEMA,
                attempt=attempt,
                providers=self.providers,
            )

        def read(reply: Reply) -> Read[LabEvaluation | None]:
            evaluation, why = read_evaluation(reply.text or "", reply.structured)
            return Read(evaluation, evaluation is not None, why)

        return await ask_until_read(ask, read, retries=PARSE_RETRIES, re_ask_note=_NOTE)


_NOTE = "Answer only with the JSON object described above, with a score from 0.0 to 1.0."


def best_iteration(iterations: list[IterationData]) -> IterationData | None:
    """The highest-scored iteration (the earliest of equals); None when none was scored."""
    scored = [i for i in iterations if i.evaluation is not None]
    if not scored:
        return None
    return max(
        scored, key=lambda i: (i.evaluation.score if i.evaluation else 0.0, -i.iteration_number)
    )


def _result(
    iterations: list[IterationData],
    request: GenerateAnswerRequest,
    run_id: str,
    model: str,
    judge: str,
) -> GenerateAnswerResponse:
    best = best_iteration(iterations)
    answered = [i for i in iterations if i.answer]
    final = best if best is not None else (answered[-1] if answered else None)
    score = best.evaluation.score if best is not None and best.evaluation is not None else None
    costs = [i.cost_usd for i in iterations]
    return GenerateAnswerResponse(
        final_answer=final.answer if final is not None else "",
        iterations=iterations,
        success=score is not None and score >= request.score_threshold,
        total_iterations=len(iterations),
        final_score=score,
        metadata={
            "run_id": run_id,
            "model": model,
            "judge_model": judge,
            "threshold": request.score_threshold,
            "best_iteration": best.iteration_number if best is not None else None,
            "input_tokens": sum(i.input_tokens for i in iterations),
            "output_tokens": sum(i.output_tokens for i in iterations),
            "cost_usd": None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
            "latency_s": round(sum(i.latency_s for i in iterations), 6),
            "errors": [i.error for i in iterations if i.error],
        },
    )
