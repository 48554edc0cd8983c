"""The comparative judge as an evaluator: the answers of one group judged side by side.

Registered as the built-in evaluator type ``comparative`` (entry point group
``qualspec.evaluators``); a suite's ``comparisons:`` entries become evaluators of this
type. A group is every answer that shares a scenario, input, temperature, run index and
the dimension held fixed (``within``): the candidates' answers for one role, or one
candidate's answers to every role. The group is judged once it is complete, in one call,
under neutral labels in an order shuffled from a recorded seed (derived from the run id and
the group's subject key, so a resumed run asks the same question); with ``debias`` a
second call shows the reversed order and the scores are averaged.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.engine import HookDefaults
from qualspec.judges._ask import Read, ask_until_read
from qualspec.judges._compare_prompt import (
    COMPARISON_PROMPT_NAME,
    DEFAULT_COMPARE_CHARS,
    TIE,
    ParsedComparison,
    build_comparison_messages,
    comparison_labels,
    comparison_schema,
    read_comparison,
)
from qualspec.judges._criteria import CandidateView, judge_prompt_text
from qualspec.judges._criteria_judge import DEFAULT_PARSE_RETRIES, candidate_view

if TYPE_CHECKING:
    from qualspec.engine import (
        EvalContext,
        PlannedCalls,
        Reply,
        Scope,
        Subject,
        Verdict,
        WorkItem,
    )
    from qualspec.spec import EvaluatorConfig

__all__ = [
    "COMPARISON_ASPECT",
    "ComparativeJudge",
    "comparison_order",
    "comparison_seed",
    "create",
]

COMPARISON_ASPECT = "comparison"
DIMENSIONS = ("candidates", "roles")
_DEFAULT_CRITERIA = ("answers the question well: correct, complete and useful",)
_ALL_ANSWERS_CHARS = 6000  # what the answers of a group may take of the judge's window
_MIN_ANSWER_CHARS = 400
_BASE_MAX_TOKENS = 160
_TOKENS_PER_LABEL = 16


def comparison_seed(subject_key: str) -> int:
    """The shuffle seed of one group, derived from the group itself.

    The group's key hashes its members' cell keys, so every run of an unchanged suite (and
    every resume) shows the judge the same order: a rerun is answered from the cache rather
    than paid for again, while different groups get independent orders.

    Example:
        >>> comparison_seed("g123") == comparison_seed("g123")
        True
    """
    digest = hashlib.sha256(f"comparison-order\x1f{subject_key}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def comparison_order(keys: Sequence[str], seed: int) -> list[str]:
    """The order the judge is shown a group's response keys in: sorted, then shuffled.

    A record's ``details["order"]`` is ``comparison_order(record.subject,
    details["seed"])``: the order can be reproduced from the recorded seed.

    Example:
        >>> comparison_order(["k2", "k1", "k3"], 7) == comparison_order(["k3", "k1", "k2"], 7)
        True
    """
    order = sorted(keys)
    random.Random(seed).shuffle(order)
    return order


@dataclass(frozen=True, slots=True)
class _Pass:
    """One call's outcome: the parsed verdict by response key, or why it has none."""

    order: list[str]
    labels: dict[str, str]  # label -> response key
    parsed: ParsedComparison | None
    text: str | None
    error: str | None = None

    def scores(self) -> dict[str, float] | None:
        if self.parsed is None or self.parsed.scores is None:
            return None
        return {self.labels[label]: s for label, s in self.parsed.scores.items()}

    def winner(self) -> str | None:
        if self.parsed is None or self.parsed.winner is None:
            return None
        return TIE if self.parsed.winner == TIE else self.labels[self.parsed.winner]


class ComparativeJudge(HookDefaults):
    """Judges groups of answers side by side (see the module docstring).

    Example::

        ComparativeJudge(name="compare_candidates_within_roles", model="openai/gpt-4o-mini",
                         compare="candidates", within="roles", debias=True)
    """

    scope: Scope = "group"

    def __init__(
        self,
        *,
        name: str,
        model: str,
        compare: str,
        within: str,
        criteria: Sequence[str] | None = None,
        debias: bool = False,
        params: Mapping[str, Any] | None = None,
        parse_retries: int = DEFAULT_PARSE_RETRIES,
        max_response_chars: int = DEFAULT_COMPARE_CHARS,
        structured_output: str = "auto",
    ) -> None:
        self.name = name
        self.model: str | None = model
        self.threshold: float | None = None  # a comparison ranks; it does not pass or fail
        self.compare = compare
        self.within = within
        self.criteria = tuple(criteria) if criteria else None
        self.debias = debias
        self.params = dict(params or {})
        self.parse_retries = parse_retries
        self.max_response_chars = max_response_chars
        self.structured_output = structured_output

    def prompt(self) -> tuple[str, str]:
        """The comparison template, versioned by content."""
        return COMPARISON_PROMPT_NAME, judge_prompt_text(COMPARISON_PROMPT_NAME)

    @property
    def calls_per_subject(self) -> int:
        """Judge calls per group before parse retries (two with ``debias``)."""
        return 2 if self.debias else 1

    def group_of(self, item: WorkItem) -> str | None:
        """One group per (scenario, input, temperature, run) and value of ``within``."""
        held = item.role if self.within == "roles" else item.candidate
        return json.dumps(
            [item.scenario, item.input_id, item.temperature, item.run_index, held],
            ensure_ascii=False,
        )

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        """One comparison per group of at least two answers; a smaller group is skipped."""
        return (COMPARISON_ASPECT,) if len(items) >= 2 else ()

    def planned_calls(self, items: Sequence[WorkItem]) -> Sequence[PlannedCalls]:
        """One call per group of two or more (two with ``debias``): every member's answer."""
        from qualspec.engine import (
            JUDGE_OUTPUT_TOKENS,
            JUDGE_PROMPT_TOKENS,
            PER_MESSAGE_TOKENS,
            PlannedCalls,
            answer_tokens,
            message_tokens,
        )

        aspects = self.aspects(items)
        if not aspects:
            return ()
        answers = sum(message_tokens(i) - PER_MESSAGE_TOKENS + answer_tokens(i) for i in items)
        calls = len(aspects) * self.calls_per_subject
        retries = max(self.parse_retries, 0)
        tokens_in = JUDGE_PROMPT_TOKENS + answers
        return (PlannedCalls(calls, tokens_in, JUDGE_OUTPUT_TOKENS, retries, kind="compare"),)

    def member_name(self, item: WorkItem) -> str:
        """What a member is called in reports: its candidate, or its role."""
        if self.compare == "candidates":
            return item.candidate
        return item.role if item.role is not None else "(no role)"

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """Compare the group's answers (twice, in reversed order, with ``debias``)."""
        from qualspec.engine import Verdict
        from qualspec.errors import ConfigError

        if self.model is None:
            raise ConfigError(f"comparison {self.name!r} has no model: give it model:")
        keys = [r.key for r in subject.responses]
        seed = comparison_seed(subject.key)
        order = comparison_order(keys, seed)
        details = self._details(subject, seed, order)
        if len(keys) < 2:
            return Verdict(
                unscored_reason="fewer than two answers to compare (the others failed)",
                details=details,
            )
        first = await self._judge(self.model, subject, order, ctx)
        if first.error is not None:
            return Verdict(error=first.error, raw_text=first.text, details=details)
        passes = [first]
        if self.debias:
            second = await self._judge(self.model, subject, order[::-1], ctx)
            if second.error is not None:
                return Verdict(error=second.error, raw_text=first.text, details=details)
            passes.append(second)
        return self._verdict(passes, details)

    def _details(self, subject: Subject, seed: int, order: list[str]) -> dict[str, Any]:
        item = subject.items[0]
        names = {
            r.key: self.member_name(i)
            for i, r in zip(subject.items, subject.responses, strict=True)
        }
        held = "role" if self.within == "roles" else "candidate"
        return {
            "type": "comparison",
            "compare": self.compare,
            "within": self.within,
            "scenario": item.scenario,
            "input_id": item.input_id,
            "temperature": item.temperature,
            "run_index": item.run_index,
            "group": {held: item.role if held == "role" else item.candidate},
            "members": {key: names[key] for key in order},
            "winner": None,
            "seed": seed,
            "order": order,
            "labels": dict(zip(comparison_labels(len(order)), order, strict=True)),
            "debias": None,
        }

    def _verdict(self, passes: list[_Pass], details: dict[str, Any]) -> Verdict:
        from qualspec.engine import Verdict

        first = passes[0]
        raw = first.text
        if len(passes) > 1:
            second = passes[1]
            raw = f"{first.text or ''}\n\n--- reversed order ---\n{second.text or ''}"
            first_winner, second_winner = first.winner(), second.winner()
            details["debias"] = {
                "reversed_order": second.order,
                "reversed_scores": second.scores(),
                "reversed_winner": second_winner,
                "disagreed": None
                if first_winner is None or second_winner is None
                else first_winner != second_winner,
            }
        scored = [p for p in passes if p.scores() is not None]
        if not scored:
            reason = first.parsed.unscored_reason if first.parsed else "the judge gave no verdict"
            reasoning = first.parsed.reasoning if first.parsed else None
            return Verdict(
                unscored_reason=reason, reasoning=reasoning, raw_text=raw, details=details
            )
        tables = [p.scores() or {} for p in scored]
        scores = {key: sum(t[key] for t in tables) / len(tables) for key in first.order}
        if len(scored) == 1:
            winner = scored[0].winner()
        else:  # the two orders averaged: the best mean wins
            best = max(scores.values())
            top = [key for key, s in scores.items() if s == best]
            winner = top[0] if len(top) == 1 else TIE
        details["winner"] = winner
        reasoning = scored[0].parsed.reasoning if scored[0].parsed else None
        if reasoning and scored[0] is not first:  # its labels are those of the reversed order
            reasoning = f"[reversed order] {reasoning}"
        return Verdict(scores=dict(scores), reasoning=reasoning, raw_text=raw, details=details)

    async def _judge(
        self, model: str, subject: Subject, order: list[str], ctx: EvalContext
    ) -> _Pass:
        """One comparison call (with bounded re-asks) of the answers in ``order``."""
        texts = {r.key: r.text or "" for r in subject.responses}
        labels = comparison_labels(len(order))
        by_label = dict(zip(labels, order, strict=True))
        answers = [(label, texts[key]) for label, key in by_label.items()]
        criteria = list(self.criteria or subject.items[0].criteria or _DEFAULT_CRITERIA)
        view = shared_view(subject.items)
        schema = comparison_schema(labels)
        params = dict(self.params)
        temperature = float(params.pop("temperature", 0.0))
        max_tokens = int(
            params.pop("max_tokens", _BASE_MAX_TOKENS + _TOKENS_PER_LABEL * len(labels))
        )
        # several answers share the judge's window: each gets its share of it
        chars = min(
            self.max_response_chars, max(_MIN_ANSWER_CHARS, _ALL_ANSWERS_CHARS // len(order))
        )

        async def ask(attempt: int, note: str | None) -> Reply:
            messages = build_comparison_messages(
                view=view,
                answers=answers,
                criteria=criteria,
                max_response_chars=chars,
                retry_note=note,
            )
            return await ctx.complete(
                model,
                messages,
                temperature=temperature,
                max_tokens=max_tokens,
                params=params,
                json_schema=schema,
                attempt=attempt,
                structured_mode=self.structured_output,
            )

        def read(reply: Reply) -> Read[ParsedComparison]:
            parsed = read_comparison(reply.text or "", reply.structured, labels)
            return Read(parsed, parsed.scores is not None, parsed.unscored_reason)

        keys = ", ".join(f'"{label}": <0-10>' for label in labels)
        how = (
            f'Answer only with the JSON object {{"scores": {{{keys}}}, "winner": '
            f'"<{", ".join(labels)} or tie>", "reasoning": "..."}}.'
        )
        asked = await ask_until_read(ask, read, retries=self.parse_retries, re_ask_note=how)
        return _Pass(order, by_label, asked.value, asked.text, error=asked.error)


def shared_view(items: Sequence[WorkItem]) -> CandidateView:
    """What every answer of a group was asked, and nothing that tells them apart.

    The question is the prompt as sent when every member got the same one (the persona,
    when shared, is shown too); otherwise the prompt without each member's persona
    preamble. A system prompt is shown only when every member had the same one.
    """
    views = [candidate_view(item) for item in items]
    first = views[0]
    same_prompt = all(v.prompt == first.prompt for v in views)
    if same_prompt:
        prompt, preamble = first.prompt, first.preamble
    else:
        prompt, preamble = _without_preamble(first), None
    systems = {v.system_prompt for v in views}
    return CandidateView(
        prompt=prompt,
        system_prompt=first.system_prompt if len(systems) == 1 else None,
        preamble=preamble,
        input_values=first.input_values,
        context=first.context,
    )


def _without_preamble(view: CandidateView) -> str:
    if view.preamble and view.prompt.startswith(view.preamble):
        return view.prompt[len(view.preamble) :].lstrip("\n")
    return view.prompt


def create(config: EvaluatorConfig) -> ComparativeJudge:
    """The factory behind the ``comparative`` entry point.

    Options: ``compare`` (candidates or roles), ``within`` (the other one, by default),
    ``criteria``, ``debias``, ``parse_retries`` and ``max_response_chars``.
    """
    from qualspec.errors import ConfigError
    from qualspec.spec import DEFAULT_JUDGE_MODEL

    options = dict(config.options)
    label = config.name or config.type
    compare = options.pop("compare", None)
    if compare not in DIMENSIONS:
        raise ConfigError(
            f"comparison {label!r}: compare must be candidates or roles, got {compare!r}"
        )
    other = next(d for d in DIMENSIONS if d != compare)
    within = options.pop("within", other)
    if within != other:
        raise ConfigError(
            f"comparison {label!r}: within must be {other} when comparing {compare}, got {within!r}"
        )
    criteria = options.pop("criteria", None)
    if criteria is not None and (
        not isinstance(criteria, list) or not all(isinstance(c, str) for c in criteria)
    ):
        raise ConfigError(f"comparison {label!r}: criteria must be a list of statements")
    debias = bool(options.pop("debias", False))
    retries = int(options.pop("parse_retries", DEFAULT_PARSE_RETRIES))
    max_chars = int(options.pop("max_response_chars", DEFAULT_COMPARE_CHARS))
    if options:
        raise ConfigError(
            f"comparison {label!r}: unknown option(s) {', '.join(sorted(options))}; the "
            "comparative judge takes compare, within, criteria, debias, parse_retries and "
            "max_response_chars"
        )
    return ComparativeJudge(
        name=label,
        model=config.model or DEFAULT_JUDGE_MODEL,
        compare=compare,
        within=within,
        criteria=criteria,
        debias=debias,
        params=config.params,
        parse_retries=retries,
        max_response_chars=max_chars,
        structured_output=config.structured_output,
    )
