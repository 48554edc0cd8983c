"""The criteria judge as an evaluator: each answer scored 0-10 on each of its criteria.

Registered as the built-in evaluator type ``criteria`` (entry point group
``qualspec.evaluators``), exactly as a plugin would be.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from qualspec.judges._criteria import (
    JUDGE_PROMPT_NAME,
    JUDGE_SCHEMA,
    build_judge_messages,
    judge_prompt_text,
)
from qualspec.judges._parsing import ParsedJudgment, parse_judgment

if TYPE_CHECKING:
    from qualspec.engine import EvalContext, Scope, Subject, Verdict, WorkItem
    from qualspec.spec import EvaluatorConfig

__all__ = ["CriteriaJudge", "create"]

DEFAULT_PARSE_RETRIES = 2
DEFAULT_MAX_RESPONSE_CHARS = 4000


class CriteriaJudge:
    """Scores one answer on one criterion per call, with bounded re-asks for unreadable output.

    Example::

        CriteriaJudge(name="criteria", model="openai/gpt-4o-mini", threshold=7)
    """

    scope: Scope = "response"

    def __init__(
        self,
        *,
        name: str,
        model: str,
        threshold: float,
        params: Mapping[str, Any] | None = None,
        parse_retries: int = DEFAULT_PARSE_RETRIES,
        max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS,
    ) -> None:
        self.name = name
        self.model: str | None = model
        self.threshold: float | None = threshold
        self.params = dict(params or {})
        self.parse_retries = parse_retries
        self.max_response_chars = max_response_chars

    def prompt(self) -> tuple[str, str]:
        """The judge template, versioned by content."""
        return JUDGE_PROMPT_NAME, judge_prompt_text()

    def group_of(self, item: WorkItem) -> str | None:
        """Not a group evaluator."""
        return None

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        """The criteria that apply to the answer."""
        return items[0].criteria

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """Score the subject's answer on the criterion ``aspect``."""
        from qualspec.engine import Verdict
        from qualspec.errors import ConfigError

        model = self.model
        if model is None:
            raise ConfigError(f"judge {self.name!r} has no model: give it model: provider/model")
        item, response = subject.items[0], subject.responses[0]
        params = dict(self.params)
        temperature = float(params.pop("temperature", 0.0))
        max_tokens = int(params.pop("max_tokens", 256))
        retry_note: str | None = None
        parsed: ParsedJudgment | None = None
        text: str | None = None
        for attempt in range(max(self.parse_retries, 0) + 1):
            messages = build_judge_messages(
                criterion=aspect,
                prompt=_user_prompt(item),
                response=response.text or "",
                context=item.context,
                max_response_chars=self.max_response_chars,
                retry_note=retry_note,
            )
            reply = await ctx.complete(
                model,
                messages,
                temperature=temperature,
                max_tokens=max_tokens,
                params=params,
                json_schema=JUDGE_SCHEMA,
                attempt=attempt,
            )
            if reply.error is not None:
                return Verdict(error=reply.error, raw_text=text)
            text = reply.text
            parsed = parse_judgment(text or "", reply.structured)
            if parsed.score is not None:
                break
            retry_note = (
                f"Your previous answer could not be read ({parsed.unscored_reason}). "
                'Answer only with the JSON object {"score": <0-10>, "reasoning": "..."}.'
            )
        if parsed is None:  # not reached: the loop runs at least once
            return Verdict(error="the judge was not asked", raw_text=text)
        return Verdict(
            score=parsed.score,
            reasoning=parsed.reasoning,
            unscored_reason=parsed.unscored_reason if parsed.score is None else None,
            raw_text=text,
        )


def _user_prompt(item: WorkItem) -> str:
    for message in reversed(item.messages):
        if message.role == "user":
            return message.content
    return ""


def create(config: EvaluatorConfig) -> CriteriaJudge:
    """The factory behind the ``criteria`` entry point."""
    from qualspec.errors import ConfigError
    from qualspec.spec import DEFAULT_JUDGE_MODEL

    options = dict(config.options)
    retries = options.pop("parse_retries", DEFAULT_PARSE_RETRIES)
    max_chars = options.pop("max_response_chars", DEFAULT_MAX_RESPONSE_CHARS)
    if options:
        raise ConfigError(
            f"judge {config.name or config.type!r}: unknown option(s) {', '.join(sorted(options))}"
            "; the criteria judge takes parse_retries and max_response_chars"
        )
    return CriteriaJudge(
        name=config.name or config.type,
        model=config.model or DEFAULT_JUDGE_MODEL,
        threshold=config.threshold,
        params=config.params,
        parse_retries=int(retries),
        max_response_chars=int(max_chars),
    )
