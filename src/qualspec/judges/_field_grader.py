"""The field grader: each structured answer graded field by field against its reference.

Registered as the built-in evaluator type ``field_grader``. One record per candidate
answer (aspect ``fields``); one grader call grades every field a rule does not decide
(identical values, both empty, a missing field, an unreadable answer or a refusal are
decided without a call, and an answer decided entirely by rules costs none).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from qualspec.judges._ask import Read, ask_until_read
from qualspec.judges._criteria import _sections, truncate_text
from qualspec.judges._criteria_judge import candidate_view
from qualspec.judges._field_reading import CONTRADICTORY, field_grade_schema, read_field_grades
from qualspec.judges._field_rules import (
    FieldGrade,
    FieldRule,
    band,
    field_pass_rate,
    read_reference,
    read_structured,
    rule_grade,
    simple_mean,
    weighted_mean,
)
from qualspec.prompts import load_template, render_template
from qualspec.providers import Message

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
    from qualspec.spec import EvaluatorConfig
    from qualspec.store import ReferenceReview

__all__ = [
    "FIELD_GRADER",
    "build_field_messages",
    "FIELD_GRADE_PROMPT_NAME",
    "FieldGrader",
    "LOW_CONFIDENCE",
    "create",
    "field_grade_schema",
    "read_field_grades",
]

FIELD_GRADER = "field_grader"
FIELD_GRADE_PROMPT_NAME = "grade_fields"
FIELDS_ASPECT = "fields"
_MAX_VALUE_CHARS = 1500
_TOKENS_PER_FIELD = 80
LOW_CONFIDENCE = 0.5
"""A grade the grader gives with less confidence flags the answer ``low_confidence``."""


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return truncate_text(text, _MAX_VALUE_CHARS, what="value")


def build_field_messages(
    item: WorkItem,
    names: Sequence[str],
    reference: Mapping[str, Any],
    answer: Mapping[str, Any],
    retry_note: str | None = None,
) -> tuple[Message, Message]:
    """The grading prompt for fields ``names`` (template ``grade_fields``)."""
    from qualspec.judges._criteria import _setup_block

    sections = _sections(load_template(FIELD_GRADE_PROMPT_NAME), FIELD_GRADE_PROMPT_NAME)
    blocks = [
        f"- {n}:\n  reference <<<{_shown(reference.get(n))}>>>\n"
        f"  answer <<<{_shown(answer.get(n))}>>>"
        for n in names
    ]
    values = {
        "setup_block": _setup_block(candidate_view(item)),
        "fields_block": "\n".join(blocks),
        "field_names": ", ".join(names),
    }
    user = render_template(sections["user"], values)
    if retry_note:
        user = f"{user}\n\n{retry_note}"
    return Message("system", render_template(sections["system"], values)), Message("user", user)


class FieldGrader:
    """Grades structured answers field by field against their reference answers.

    ``fields`` maps a scenario to its graded fields; ``threshold`` is the pass mark of the
    weighted mean accuracy (0-100). ``reference_override``, when given, returns a human
    override of a reference answer by its call key (or None).

    Example::

        FieldGrader(name="field_grader", model="openai/gpt-4o-mini",
                    fields={"profile": [FieldRule("name", critical=True, weight=2)]})
    """

    scope: Scope = "response"
    kinds = ("candidate",)
    uses_dependencies = True  # waits for the reference answer
    scores_criteria = False  # it grades fields, not the answer's criteria

    def __init__(
        self,
        *,
        name: str,
        model: str,
        fields: Mapping[str, Sequence[FieldRule]],
        threshold: float = 80.0,
        params: Mapping[str, Any] | None = None,
        parse_retries: int = 2,
        structured_output: str = "auto",
        reference_override: Callable[[str], str | None] | None = None,
    ) -> None:
        self.name = name
        self.model: str | None = model
        self.threshold: float | None = threshold
        self.fields = {k: tuple(v) for k, v in fields.items()}
        self.params = dict(params or {})
        self.parse_retries = parse_retries
        self.structured_output = structured_output
        self.reference_override = reference_override

    def prompt(self) -> tuple[str, str]:
        """The grading template, versioned by content."""
        return FIELD_GRADE_PROMPT_NAME, load_template(FIELD_GRADE_PROMPT_NAME)

    def group_of(self, item: WorkItem) -> str | None:
        """Not a group evaluator."""
        return None

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        """One record (``fields``) for an answer of a graded scenario with a reference."""
        item = items[0]
        return (FIELDS_ASPECT,) if item.scenario in self.fields and item.depends_on else ()

    def planned_calls(self, items: Sequence[WorkItem]) -> Sequence[PlannedCalls]:
        """At most one call per graded answer: the reference and the answer, every field."""
        from qualspec.engine import (
            JUDGE_OUTPUT_TOKENS,
            JUDGE_PROMPT_TOKENS,
            PlannedCalls,
            answer_tokens,
            judged_tokens,
        )

        if not self.aspects(items):
            return ()
        tokens_in = JUDGE_PROMPT_TOKENS + judged_tokens(items[0]) + answer_tokens(items[0])
        out = 2 * JUDGE_OUTPUT_TOKENS
        return (PlannedCalls(1, tokens_in, out, self.parse_retries, kind="grader"),)

    def planned_preparation(
        self, *, calibrate: bool, calibrated: Calibrated | None
    ) -> Sequence[PlannedCalls]:
        """Its calibration's calls (see ``planned_grader_calibration``)."""
        from qualspec.judges._grader_calibration import planned_grader_calibration

        return planned_grader_calibration(self, calibrate=calibrate, calibrated=calibrated)

    async def prepare(self, ctx: PrepareContext) -> dict[str, Any] | None:
        """Its calibration on known field pairs (see ``prepare_grader_calibration``)."""
        from qualspec.judges._grader_calibration import prepare_grader_calibration

        return await prepare_grader_calibration(self, ctx)

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """Grade the subject's answer against its reference answer."""
        from qualspec.engine import Verdict

        item, response = subject.items[0], subject.responses[0]
        rules = self.fields[item.scenario]
        ref_key = next((k for k in item.depends_on if k in subject.dependencies), None)
        if ref_key is None:
            return Verdict(error="no reference answer for this answer (is reference: set?)")
        ref_text = subject.dependencies[ref_key].text
        ref_call = subject.dependency_call_keys.get(ref_key)
        override, status = await self._review(ref_call, ref_text, ctx)
        details: dict[str, Any] = {
            "type": "field_grade",
            "reference_key": ref_key,
            "reference_call_key": ref_call,
            "reference_status": status,
        }
        graded_text = override if override is not None else ref_text
        # what was graded against, so that two runs can tell when they graded against
        # different references (``qualspec compare``, ``qualspec insights``)
        details["reference_sha256"] = (
            None if graded_text is None else hashlib.sha256(graded_text.encode()).hexdigest()
        )
        details["reference_override"] = override is not None
        reference, flag = read_reference(graded_text, rules)
        if reference is None:
            bad = flag == "malformed_reference"
            why = "the reference answer is " + ("not a JSON object" if bad else "empty")
            if override is not None:
                why = f"{why} (the override a person wrote)"
            none = _uniform(rules, None, "error", why)
            return self._verdict(rules, none, [str(flag)], details, f"not graded: {why}")
        answer, answer_flag = read_structured(response.text)
        if answer is None:
            flag = "refusal" if answer_flag == "refusal" else "malformed_json"
            why = "the answer is a refusal" if flag == "refusal" else "the answer is not JSON"
            return self._verdict(rules, _uniform(rules, 0.0, "none", why), [flag], details)
        grades: dict[str, FieldGrade] = {}
        for rule in rules:
            decided = rule_grade(
                reference.get(rule.name), answer.get(rule.name), present=rule.name in answer
            )
            if decided is not None:
                grades[rule.name] = decided
        todo = [r.name for r in rules if r.name not in grades]
        if not todo:
            ruled = list(dict.fromkeys(g.flag for g in grades.values() if g.flag))
            return self._verdict(rules, grades, ruled, details)
        found, raw, error = await self._ask(item, todo, reference, answer, ctx)
        return self._graded(rules, grades, todo, found, raw, error, details)

    def _graded(
        self,
        rules: Sequence[FieldRule],
        grades: dict[str, FieldGrade],
        todo: list[str],
        found: dict[str, FieldGrade | str],
        raw: str | None,
        error: str | None,
        details: dict[str, Any],
    ) -> Verdict:
        """The verdict once the grader was asked for the fields ``todo`` (``found``: its
        grades or why each is unread; ``error``: its call failed)."""
        flags: list[str] = []
        unread: list[str] = []
        for name in todo:
            got = found.get(name)
            if isinstance(got, FieldGrade):
                grades[name] = got
            else:
                why = f"grader call failed: {error}" if error else (got or "no grade")
                contradictory = isinstance(got, str) and CONTRADICTORY in got
                flag = "contradictory_grade" if contradictory and not error else None
                grades[name] = FieldGrade(None, "error", why, None, "grader", flag)
                unread.append(name)
        for grade in grades.values():  # what a rule or the grader found wrong, once each
            if grade.flag is not None and grade.flag not in flags:
                flags.append(grade.flag)
        if any(
            g.decided_by == "grader" and g.confidence is not None and g.confidence < LOW_CONFIDENCE
            for g in grades.values()
        ):
            flags.append("low_confidence")  # the grader is unsure: worth a person's look
        if error is not None:
            if "no answer within" in error or "timed out" in error.lower():
                flags.append("timeout")
            verdict = self._verdict(rules, grades, flags, details)
            verdict.error = error
            verdict.raw_text = raw
            return verdict
        reason = (
            f"{len(unread)} of {len(rules)} fields not graded: {grades[unread[0]].explanation}"
            if unread
            else None
        )
        verdict = self._verdict(rules, grades, flags, details, reason)
        verdict.raw_text = raw
        return verdict

    async def _review(
        self, call_key: str | None, text: str | None, ctx: EvalContext
    ) -> tuple[str | None, str]:
        """A person's override of the reference answer (or None), and its status.

        From ``reference_override`` when given, else from the store's review of the answer
        (``Store.reference_review``, which a run's context and grader-check's both offer
        as ``ctx.reference_review``; a bare ``EvalContext`` without it: none); unreviewed:
        unvalidated.
        """
        if call_key is None:
            return None, "unvalidated"
        if self.reference_override is not None:
            return self.reference_override(call_key), "unvalidated"
        getter = getattr(ctx, "reference_review", None)  # not part of the EvalContext protocol
        review: ReferenceReview | None = await getter(call_key) if getter is not None else None
        if review is None:
            return None, "unvalidated"
        return review.override_text, review.status_for(text)

    def _verdict(
        self,
        rules: Sequence[FieldRule],
        grades: dict[str, FieldGrade],
        flags: list[str],
        details: dict[str, Any],
        reason: str | None = None,
    ) -> Verdict:
        from qualspec.engine import Verdict

        threshold = self.threshold if self.threshold is not None else 80.0
        # an answer with a field not graded is unscored: its means would be made up; a
        # field the reference has no value for is not graded and not counted
        complete = all(g.accuracy is not None or g.match == "no_reference" for g in grades.values())
        weighted = weighted_mean(grades, rules) if complete else None
        if complete and weighted is None and reason is None:
            reason = "no field could be graded: the reference has no value for any of them"
        by_rule = {r.name: r for r in rules}
        details = {
            **details,
            "fields": {
                name: {
                    "accuracy": g.accuracy,
                    "match": g.match,
                    "explanation": g.explanation,
                    "confidence": g.confidence,
                    "critical": by_rule[name].critical,
                    "weight": by_rule[name].weight,
                    "decided_by": g.decided_by,
                    **({"flag": g.flag} if g.flag else {}),
                }
                for name, g in grades.items()
            },
            "simple_mean": simple_mean(grades) if complete else None,
            "weighted_mean": weighted,
            "band": band(weighted),
            "field_pass_rate": field_pass_rate(grades, threshold) if complete else None,
            "flags": flags,
        }
        summary = ", ".join(
            f"{n} {g.accuracy:g} ({g.match})" for n, g in grades.items() if g.accuracy is not None
        )
        return Verdict(
            score=weighted,
            passed=None if weighted is None else weighted >= threshold,
            reasoning=summary or None,
            unscored_reason=reason,
            scores={name: g.accuracy for name, g in grades.items()},
            details=details,
        )

    async def _ask(
        self,
        item: WorkItem,
        names: list[str],
        reference: Mapping[str, Any],
        answer: Mapping[str, Any],
        ctx: EvalContext,
    ) -> tuple[dict[str, FieldGrade | str], str | None, str | None]:
        """The grader's grades of ``names`` (re-asked for unreadable ones), its last raw
        text, and the error of a call that failed."""
        if self.model is None:  # pragma: no cover - create() always sets one
            raise ValueError("the field grader has no model")
        model = self.model
        params = dict(self.params)
        temperature = float(params.pop("temperature", 0.0))
        max_tokens = int(params.pop("max_tokens", 60 + _TOKENS_PER_FIELD * len(names)))
        found: dict[str, FieldGrade | str] = {}

        def missing() -> list[str]:
            return [n for n in names if not isinstance(found.get(n), FieldGrade)]

        async def ask(attempt: int, note: str | None) -> Reply:
            todo = missing()  # a re-ask asks only for the fields still ungraded
            return await ctx.complete(
                model,
                build_field_messages(item, todo, reference, answer, note),
                temperature=temperature,
                max_tokens=max_tokens,
                params=params,
                json_schema=field_grade_schema(todo),
                attempt=attempt,
                structured_mode=self.structured_output,
            )

        def read(reply: Reply) -> Read[None]:
            found.update(read_field_grades(reply.text or "", reply.structured, missing()))
            still = missing()
            return Read(None, not still, "; ".join(str(found[n]) for n in still[:3]))

        asked = await ask_until_read(ask, read, retries=self.parse_retries, re_ask_note=_NOTE)
        if asked.error is not None and not any(isinstance(v, FieldGrade) for v in found.values()):
            return found, asked.text, asked.error
        return found, asked.text, None  # a failed re-ask keeps what an earlier one read


_NOTE = (
    'Answer only with the JSON object {"fields": {"<field>": {"accuracy": <0-100>, '
    '"match": "...", "explanation": "...", "confidence": <0-1>}}}.'
)


def _uniform(
    rules: Sequence[FieldRule], accuracy: float | None, match: str, why: str
) -> dict[str, FieldGrade]:
    """Every field graded alike by a rule (an unusable answer or reference)."""
    sure = 1.0 if accuracy is not None else None
    return {r.name: FieldGrade(accuracy, match, why, sure, "rule") for r in rules}


def create(config: EvaluatorConfig) -> FieldGrader:
    """The factory behind the ``field_grader`` entry point.

    Options: ``fields`` (scenario -> list of {name, critical, weight}), ``threshold``
    (0-100, default 80), ``parse_retries`` (default 2).
    """
    from qualspec.errors import ConfigError
    from qualspec.spec import DEFAULT_JUDGE_MODEL

    options = dict(config.options)
    raw_fields = options.pop("fields", {})
    threshold = options.pop("threshold", 80.0)
    retries = options.pop("parse_retries", 2)
    if options:
        raise ConfigError(
            f"judge {config.name or config.type!r}: unknown option(s) {', '.join(sorted(options))}"
            "; the field grader takes fields, threshold and parse_retries"
        )
    fields: dict[str, list[FieldRule]] = {}
    for scenario, entries in dict(raw_fields).items():
        rules = []
        for entry in entries:
            weight = entry.get("weight")
            critical = bool(entry.get("critical", False))
            rules.append(
                FieldRule(
                    name=str(entry["name"]),
                    critical=critical,
                    weight=float(weight) if weight is not None else (2.0 if critical else 1.0),
                )
            )
        fields[str(scenario)] = rules
    return FieldGrader(
        name=config.name or config.type,
        model=config.model or DEFAULT_JUDGE_MODEL,
        fields=fields,
        threshold=float(threshold),
        params=config.params,
        parse_retries=int(retries),
        structured_output=config.structured_output,
    )
