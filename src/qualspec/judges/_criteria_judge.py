"""The criteria judge as an evaluator: each answer scored 0-10 on each of its criteria.

Registered as the built-in evaluator type ``criteria`` (entry point group
``qualspec.evaluators``), exactly as a plugin would be.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from qualspec.judges._ask import Read, ask_until_read
from qualspec.judges._criteria import (
    ALL_CRITERIA_PROMPT_NAME,
    JUDGE_PROMPT_NAME,
    JUDGE_SCHEMA,
    CandidateView,
    all_criteria_schema,
    build_all_criteria_messages,
    build_judge_messages,
    judge_prompt_text,
)
from qualspec.judges._parsing import ParsedJudgment, is_placeholder, parse_judgment

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
    from qualspec.judges import PanelJudge  # the package's name: no file cycle
    from qualspec.judges._expected import ExpectedScoring
    from qualspec.providers import Message
    from qualspec.spec import EvaluatorConfig

__all__ = ["CriteriaJudge", "candidate_view", "create", "verdict_object"]

DEFAULT_PARSE_RETRIES = 2
DEFAULT_MAX_RESPONSE_CHARS = 4000
# a verdict is one JSON object with one sentence of reasoning: bounded, so a small model
# that rambles costs seconds, not minutes
DEFAULT_JUDGE_MAX_TOKENS = 160


class CriteriaJudge:
    """Scores answers 0-10 on their criteria, with bounded re-asks for unreadable output.

    ``mode="per_criterion"`` (the default) makes one call per criterion;
    ``mode="all_criteria"`` one call per answer that scores every criterion, with the same
    parsing guarantees per criterion (a criterion whose score cannot be read is unscored
    and asked again). ``structured_output`` is ``auto`` (negotiated per endpoint) or a
    fixed mode. ``scoring="expected"`` (per_criterion only) makes each score the
    probability-weighted mean over the score tokens (see :mod:`qualspec.judges._expected`)
    where the endpoint returns token log-probabilities, else the sampled score. The judge
    sees what the candidate saw (system prompt, persona, input row), marked as data apart
    from the answer.

    Example::

        CriteriaJudge(name="criteria", model="openai/gpt-4o-mini", threshold=7)
    """

    scope: Scope = "response"
    kinds: Sequence[str] = ("candidate",)
    uses_dependencies = False  # judges the answer alone: never waits for a reference
    scores_criteria = True  # its aspects are each answer's criteria
    # the suite's ``calibrate: N`` (known pairs measured before a run; None: the default)
    calibrate_pairs: int | None = None

    def __init__(
        self,
        *,
        name: str,
        model: str,
        threshold: float,
        params: Mapping[str, Any] | None = None,
        parse_retries: int = DEFAULT_PARSE_RETRIES,
        max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS,
        mode: str = "per_criterion",
        structured_output: str = "auto",
        scoring: str = "sampled",
    ) -> None:
        from qualspec.errors import ConfigError

        if scoring not in ("sampled", "expected"):
            raise ConfigError(f"judge {name!r}: scoring must be sampled or expected")
        if scoring == "expected" and mode != "per_criterion":
            raise ConfigError(
                f"judge {name!r}: scoring: expected needs mode: per_criterion (one score "
                "per call); remove mode: all_criteria or scoring: expected"
            )
        self.name = name
        self.model: str | None = model
        self.threshold: float | None = threshold
        self.params = dict(params or {})
        self.parse_retries = parse_retries
        self.max_response_chars = max_response_chars
        self.mode = mode
        self.structured_output = structured_output
        self.scoring = scoring
        self._expected: ExpectedScoring | None = None
        if scoring == "expected":  # the log-probability reader: loaded for such a judge only
            from qualspec.judges._expected import ExpectedScoring

            self._expected = ExpectedScoring(name)
        # all_criteria: one shared verdict per subject while its aspects are recorded
        self._shared: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._waiting: dict[str, int] = {}

    @classmethod
    def from_config(cls, config: EvaluatorConfig) -> CriteriaJudge:
        """The judge a ``judges:`` entry (or ``judge:``) describes (one judge: a panel's
        entry is made by :func:`create`)."""
        made = create(config.model_copy(update={"panel": None}))
        if not isinstance(made, CriteriaJudge):  # never: without a panel, one judge
            raise TypeError(f"expected a criteria judge, got {type(made).__name__}")
        return made

    def prompt(self) -> tuple[str, str]:
        """The judge template, versioned by content."""
        name = ALL_CRITERIA_PROMPT_NAME if self.mode == "all_criteria" else JUDGE_PROMPT_NAME
        return name, judge_prompt_text(name)

    def group_of(self, item: WorkItem) -> str | None:
        """Not a group evaluator."""
        return None

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        """The criteria that apply to the answer."""
        return items[0].criteria

    def planned_calls(self, items: Sequence[WorkItem]) -> Sequence[PlannedCalls]:
        """One call per criterion (``all_criteria``: one per answer for them all)."""
        from qualspec.engine import (
            JUDGE_OUTPUT_TOKENS,
            JUDGE_PROMPT_TOKENS,
            PlannedCalls,
            judged_tokens,
        )

        aspects = self.aspects(items)
        if not aspects:
            return ()
        tokens_in = JUDGE_PROMPT_TOKENS + judged_tokens(items[0])
        if self.mode == "all_criteria":
            return (PlannedCalls(1, tokens_in, 2 * JUDGE_OUTPUT_TOKENS, self.parse_retries),)
        return (PlannedCalls(len(aspects), tokens_in, JUDGE_OUTPUT_TOKENS, self.parse_retries),)

    def planned_preparation(
        self, *, calibrate: bool, calibrated: Calibrated | None
    ) -> Sequence[PlannedCalls]:
        """Its calibration's calls (see :func:`~qualspec.judges.planned_calibration`)."""
        from qualspec.judges._calibration import planned_calibration

        return planned_calibration(self, calibrate=calibrate, calibrated=calibrated)

    async def prepare(self, ctx: PrepareContext) -> dict[str, Any] | None:
        """Its calibration on known pairs (see :func:`~qualspec.judges.prepare_calibration`)."""
        from qualspec.judges._calibration import prepare_calibration

        return await prepare_calibration(self, ctx)

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """Score the subject's answer on the criterion ``aspect``."""
        from qualspec.errors import ConfigError

        if self.model is None:
            raise ConfigError(f"judge {self.name!r} has no model: give it model: provider/model")
        if self.mode == "all_criteria":
            return await self._one_of_all(self.model, subject, aspect, ctx)
        return await self._per_criterion(self.model, subject, aspect, ctx)

    def _call_params(self) -> tuple[float, int, dict[str, Any]]:
        params = dict(self.params)
        temperature = float(params.pop("temperature", 0.0))
        max_tokens = int(params.pop("max_tokens", DEFAULT_JUDGE_MAX_TOKENS))
        return temperature, max_tokens, params

    async def _complete(
        self,
        ctx: EvalContext,
        model: str,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        attempt: int,
        tokens_factor: int = 1,
    ) -> Reply:
        """One judge call with the judge's settings (``tokens_factor`` x its max_tokens);
        with expected scoring, asking for token log-probabilities (again without them
        when the endpoint refuses them)."""
        temperature, max_tokens, params = self._call_params()
        expected = self._expected
        while True:
            sent = params if expected is None else expected.params(params)
            reply = await ctx.complete(
                model,
                messages,
                temperature=temperature,
                max_tokens=max_tokens * tokens_factor,
                params=sent,
                json_schema=schema,
                attempt=attempt,
                structured_mode=self.structured_output,
            )
            if expected is None or sent is params or not expected.refused_by(reply.error):
                return reply

    async def _per_criterion(
        self, model: str, subject: Subject, aspect: str, ctx: EvalContext
    ) -> Verdict:
        from qualspec.engine import Verdict

        item, response = subject.items[0], subject.responses[0]
        view = candidate_view(item)

        async def ask(attempt: int, note: str | None) -> Reply:
            messages = build_judge_messages(
                criterion=aspect,
                prompt=view,
                response=response.text or "",
                max_response_chars=self.max_response_chars,
                retry_note=note,
            )
            return await self._complete(ctx, model, messages, JUDGE_SCHEMA, attempt)

        asked = await ask_until_read(
            ask, _read_score, retries=self.parse_retries, re_ask_note=_SCORE_NOTE
        )
        parsed = asked.value
        if asked.error is not None or parsed is None:  # parsed: read at least once
            return Verdict(error=asked.error or "the judge was not asked", raw_text=asked.text)
        score, details = parsed.score, None
        if self._expected is not None and score is not None:
            reply = asked.replies[-1]  # the answer read: a failed call ends the loop
            score, details = self._expected.score(reply.text or "", reply.logprobs, score)
        return Verdict(
            score=score,
            reasoning=parsed.reasoning,
            unscored_reason=parsed.unscored_reason if parsed.score is None else None,
            raw_text=asked.text,
            details=details,
        )

    async def _one_of_all(
        self, model: str, subject: Subject, aspect: str, ctx: EvalContext
    ) -> Verdict:
        """One aspect of the subject's all-criteria verdict (one call shared by all)."""
        from qualspec.engine import Verdict

        criteria = list(self.aspects(subject.items))
        key = subject.key
        shared = self._shared.get(key)
        if shared is None:
            shared = self._shared[key] = asyncio.ensure_future(
                self._judge_all(model, subject, criteria, ctx)
            )
            self._waiting[key] = len(criteria)
        try:
            verdicts = await asyncio.shield(shared)
        finally:
            self._waiting[key] -= 1
            if self._waiting[key] <= 0:  # every aspect has its record: forget the verdict
                self._shared.pop(key, None)
                self._waiting.pop(key, None)
        found = verdicts.get(aspect)
        if isinstance(found, Verdict):
            return found
        return Verdict(unscored_reason=f"criterion not in the judged list: {aspect[:80]}")

    async def _judge_all(
        self, model: str, subject: Subject, criteria: list[str], ctx: EvalContext
    ) -> dict[str, Any]:
        from qualspec.engine import Verdict

        item, response = subject.items[0], subject.responses[0]
        view = candidate_view(item)
        schema = all_criteria_schema(len(criteria))
        tokens_factor = 2 if len(criteria) > 1 else 1

        async def ask(attempt: int, note: str | None) -> Reply:
            messages = build_all_criteria_messages(
                criteria=criteria,
                view=view,
                response=response.text or "",
                max_response_chars=self.max_response_chars,
                retry_note=note,
            )
            return await self._complete(ctx, model, messages, schema, attempt, tokens_factor)

        scores = _AllScores(criteria)
        asked = await ask_until_read(
            ask, scores.read, retries=self.parse_retries, re_ask_note=_all_scores_note
        )
        if asked.error is not None and not scores.found:  # else keep what was read
            return {c: Verdict(error=asked.error, raw_text=asked.text) for c in criteria}
        return scores.verdicts(asked.text)


_SCORE_NOTE = 'Answer only with the JSON object {"score": <0-10>, "reasoning": "..."}.'


def _read_score(reply: Reply) -> Read[ParsedJudgment]:
    parsed = parse_judgment(reply.text or "", reply.structured)
    return Read(parsed, parsed.score is not None, parsed.unscored_reason)


def _all_scores_note(reasons: str | None) -> str:
    return (
        f"Your previous answer could not be read for criteria {reasons}. Answer only "
        'with the JSON object {"scores": {"1": <0-10>, ...}, "reasoning": "..."}.'
    )


class _AllScores:
    """Reads all-criteria verdicts over the attempts: a criterion's first readable score
    is kept; the reasoning is the first given."""

    def __init__(self, criteria: list[str]) -> None:
        self.criteria = criteria
        self.found: dict[str, ParsedJudgment] = {}
        self.last: dict[str, ParsedJudgment] = {}
        self.reasoning: str | None = None

    def read(self, reply: Reply) -> Read[None]:
        self.last, why = read_all_criteria(reply.text or "", reply.structured, self.criteria)
        self.reasoning = self.reasoning or why
        for criterion, parsed in self.last.items():
            if parsed.score is not None and criterion not in self.found:
                self.found[criterion] = parsed
        missing = [c for c in self.criteria if c not in self.found]
        reasons = "; ".join(
            f"{self.criteria.index(c) + 1}: {self.last[c].unscored_reason}" for c in missing[:3]
        )
        return Read(None, not missing, reasons)

    def verdicts(self, text: str | None) -> dict[str, Any]:
        """Each criterion's verdict: its score kept, else the last reason it is unread."""
        from qualspec.engine import Verdict

        out: dict[str, Any] = {}
        for criterion in self.criteria:
            best = self.found.get(criterion) or self.last.get(criterion)
            if best is None or best.score is None:
                why_not = best.unscored_reason if best else "the judge gave no verdict"
                out[criterion] = Verdict(
                    unscored_reason=why_not, raw_text=text, details={"mode": "all_criteria"}
                )
            else:
                out[criterion] = Verdict(
                    score=best.score,
                    reasoning=self.reasoning,
                    raw_text=text,
                    details={"mode": "all_criteria"},
                )
        return out


_FENCED = re.compile(r"```[A-Za-z]*\s*\n?(.*?)```", re.DOTALL)


def verdict_object(text: str, structured: object, key: str = "scores") -> Mapping[str, Any] | None:
    """A verdict object (by default with scores per key: all criteria, or a comparison's
    labels; the field grader's ``fields``): the structured answer, the whole text, or a
    fenced or embedded JSON object that has the key ``key``. A key given twice with
    different values reads as none."""
    if isinstance(structured, Mapping) and key in structured:
        return structured
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCED.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            obj = json.loads(candidate, object_pairs_hook=_no_duplicates)
        except (ValueError, _DuplicateKeyError):
            continue
        if isinstance(obj, Mapping) and key in obj:
            return obj
    return None


class _DuplicateKeyError(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out and out[key] != value:
            raise _DuplicateKeyError(key)
        out[key] = value
    return out


def read_all_criteria(
    text: str, structured: object, criteria: Sequence[str]
) -> tuple[dict[str, ParsedJudgment], str | None]:
    """Each criterion's score from an all-criteria verdict, read as strictly as one score.

    Returns (criterion -> parsed score or unscored reason, the verdict's reasoning).

    Example:
        >>> found, why = read_all_criteria('{"scores": {"1": 8, "2": "x"}, "reasoning": "ok"}',
        ...                                None, ["Correct", "Brief"])
        >>> found["Correct"].score, found["Brief"].score
        (8.0, None)
    """
    obj = verdict_object(text, structured)
    if obj is None:
        reason = "no JSON object with a scores key in the judge's answer"
        return {c: ParsedJudgment(None, None, reason, "none") for c in criteria}, None
    why = obj.get("reasoning")
    reasoning = why.strip()[:1000] if isinstance(why, str) and why.strip() else None
    if reasoning is not None and is_placeholder(reasoning):  # the prompt's template echoed
        reason = f"the judge gave back the prompt's template (reasoning {reasoning[:40]!r})"
        return {c: ParsedJudgment(None, None, reason, "none") for c in criteria}, None
    scores = obj.get("scores")
    out: dict[str, ParsedJudgment] = {}
    for number, criterion in enumerate(criteria, 1):
        if not isinstance(scores, Mapping) or str(number) not in scores:
            out[criterion] = ParsedJudgment(None, None, f"no score for criterion {number}", "none")
            continue
        value = scores[str(number)]
        out[criterion] = parse_judgment(json.dumps({"score": value}), {"score": value})
    return out, reasoning


def candidate_view(item: WorkItem) -> CandidateView:
    """What the candidate of ``item`` saw: system prompt, prompt, persona, input row."""
    system = next((m.content for m in item.messages if m.role == "system"), None)
    preamble = next((t for n, t in item.prompt_parts.items() if n.startswith("preamble:")), None)
    return CandidateView(
        prompt=_user_prompt(item),
        system_prompt=system,
        preamble=preamble,
        input_values=item.input_values,
        context=item.context,
    )


def _user_prompt(item: WorkItem) -> str:
    for message in reversed(item.messages):
        if message.role == "user":
            return message.content
    return ""


def create(config: EvaluatorConfig) -> CriteriaJudge | PanelJudge:
    """The factory behind the ``criteria`` entry point (a ``panel:``: a
    :class:`~qualspec.judges.PanelJudge` of criteria judges)."""
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

    def build(name: str, model: str, params: Mapping[str, Any]) -> CriteriaJudge:
        judge = CriteriaJudge(
            name=name,
            model=model,
            threshold=config.threshold,
            params=params,
            parse_retries=int(retries),
            max_response_chars=int(max_chars),
            mode=config.mode,
            structured_output=config.structured_output,
            scoring=config.scoring,
        )
        judge.calibrate_pairs = config.calibrate
        return judge

    if config.panel:  # several judges, combined
        from qualspec.judges._panel import PanelJudge, panel_members

        members = panel_members(config.panel, build, config.params)
        panel = PanelJudge(
            name=config.label, members=members, combine=config.combine, threshold=config.threshold
        )
        panel.calibrate_pairs = config.calibrate
        return panel
    return build(config.label, config.model or DEFAULT_JUDGE_MODEL, config.params)
