"""Deterministic checks of an answer (``expect:``), an evaluator that calls no model.

Each check gives a record like a criterion's: score 10 (passed) or 0 (failed), ``passed``
set, and a short factual reason (``found "Paris"``, ``63 words > 50``). A failed check fails
its cell whatever the judge's scores. Registered as the built-in evaluator type ``expect``
(entry point group ``qualspec.evaluators``) and added to every run whose plan has checks,
also under ``--no-judge``: checks are not a judge.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from qualspec.engine import HookDefaults

if TYPE_CHECKING:
    from qualspec.engine import EvalContext, Scope, Subject, Verdict, WorkItem
    from qualspec.spec import EvaluatorConfig

__all__ = [
    "CHECKS_EVALUATOR",
    "REFUSAL_PHRASES",
    "ExpectEvaluator",
    "check_label",
    "create",
    "looks_like_refusal",
    "run_check",
    "validate_json_schema",
]

CHECKS_EVALUATOR = "expect"

REFUSAL_PHRASES = (
    "i can't",
    "i cannot",
    "i can not",
    "i won't",
    "i will not",
    "i'm not able to",
    "i am not able to",
    "i'm unable to",
    "i am unable to",
    "i'm sorry, but",
    "i am sorry, but",
    "sorry, but i",
    "as an ai",
    "i must decline",
    "i'm not comfortable",
    "cannot help with",
    "can't help with",
    "cannot assist",
    "can't assist",
)
"""Phrases that mark an answer as a refusal (matched in its first 300 characters)."""

_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.DOTALL | re.IGNORECASE)


def looks_like_refusal(text: str) -> bool:
    """Whether an answer opens with a refusal.

    Example:
        >>> looks_like_refusal("I'm sorry, but I can't help with that.")
        True
        >>> looks_like_refusal("Paris.")
        False
    """
    head = " ".join(text.lower().replace("\u2019", "'").split())[:300]
    return any(phrase in head for phrase in REFUSAL_PHRASES)


def json_of(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when the answer (or a fenced block of it) is JSON, else
    ``(False, None)``."""
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        try:
            return True, json.loads(candidate)
        except ValueError:
            continue
    return False, None


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate_json_schema(value: Any, schema: Mapping[str, Any], where: str = "$") -> str | None:
    """The first way ``value`` breaks ``schema`` (a JSON Schema subset), or None.

    Supported: ``type`` (or a list of types), ``enum``, ``const``, ``required``,
    ``properties``, ``additionalProperties: false``, ``items``, ``minItems``/``maxItems``,
    ``minimum``/``maximum``, ``minLength``/``maxLength``, ``pattern``.

    Example:
        >>> validate_json_schema({"city": 3}, {"properties": {"city": {"type": "string"}}})
        '$.city: 3 is not of type string'
    """
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(_TYPES.get(str(k), lambda _: True)(value) for k in names):
            return f"{where}: {json.dumps(value)[:40]} is not of type {'/'.join(map(str, names))}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where}: {json.dumps(value)[:40]} is not one of {schema['enum']}"
    if "const" in schema and value != schema["const"]:
        return f"{where}: {json.dumps(value)[:40]} is not {json.dumps(schema['const'])}"
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                return f"{where}: missing required key {key!r}"
        properties = schema.get("properties", {})
        for key, sub in properties.items():
            if key in value and isinstance(sub, Mapping):
                found = validate_json_schema(value[key], sub, f"{where}.{key}")
                if found:
                    return found
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(properties))
            if extra:
                return f"{where}: unexpected key {extra[0]!r}"
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            return f"{where}: {len(value)} items < {schema['minItems']}"
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return f"{where}: {len(value)} items > {schema['maxItems']}"
        items = schema.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                found = validate_json_schema(item, items, f"{where}[{i}]")
                if found:
                    return found
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where}: {value} < minimum {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where}: {value} > maximum {schema['maximum']}"
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            return f"{where}: {len(value)} characters < minLength {schema['minLength']}"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{where}: {len(value)} characters > maxLength {schema['maxLength']}"
        if "pattern" in schema and re.search(str(schema["pattern"]), value) is None:
            return f"{where}: does not match {schema['pattern']!r}"
    return None


def _quote(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 4] + '..."'


def check_label(name: str, value: Any) -> str:
    """How a check is named in reports, e.g. ``contains "Paris"`` or ``max_words 50``.

    Example:
        >>> check_label("contains", "Paris"), check_label("refusal", False)
        ('contains "Paris"', 'refusal false')
    """
    if name == "json_schema":
        return f"json_schema {_quote(value, 80)}"
    return f"{name} {_quote(value)}"


def run_check(name: str, value: Any, text: str) -> tuple[bool, str]:
    """Run one check on an answer: (passed, a short factual reason).

    Example:
        >>> run_check("max_words", 3, "one two three four")
        (False, '4 words > 3')
    """
    if name == "contains":
        ok = value in text
        return ok, f"{'found' if ok else 'did not find'} {_quote(value)}"
    if name == "icontains":
        ok = str(value).lower() in text.lower()
        return ok, f"{'found' if ok else 'did not find'} {_quote(value)} (any case)"
    if name == "not_contains":
        ok = value not in text
        return ok, f"{'no' if ok else 'found'} {_quote(value)}"
    if name == "regex":
        match = re.search(str(value), text)
        return match is not None, (
            f"matched {_quote(match.group(0))}" if match else f"no match for {_quote(value)}"
        )
    if name == "equals":
        ok = text.strip() == str(value).strip()
        return ok, "the answer equals it" if ok else f"the answer is not {_quote(value)}"
    if name == "starts_with":
        ok = text.lstrip().startswith(str(value))
        return ok, f"{'starts' if ok else 'does not start'} with {_quote(value)}"
    if name == "max_words":
        words = len(text.split())
        return words <= int(value), f"{words} words {'<=' if words <= int(value) else '>'} {value}"
    if name == "max_chars":
        chars = len(text)
        return chars <= int(
            value
        ), f"{chars} characters {'<=' if chars <= int(value) else '>'} {value}"
    if name in ("is_json", "json_schema"):
        parsed, doc = json_of(text)
        if name == "is_json":
            ok = parsed == bool(value)
            return ok, "the answer is JSON" if parsed else "the answer is not JSON"
        if not parsed:
            return False, "the answer is not JSON"
        problem = validate_json_schema(doc, value)
        return problem is None, problem or "the JSON matches the schema"
    if name == "refusal":
        refused = looks_like_refusal(text)
        return refused == bool(value), "the answer refuses" if refused else "no refusal"
    raise ValueError(f"unknown check {name!r}")


class ExpectEvaluator(HookDefaults):
    """Runs a scenario's ``expect:`` checks on each answer; no model call.

    Example::

        ExpectEvaluator().aspects([item])   # ('contains "Paris"', 'max_words 50')
    """

    scope: Scope = "response"
    uses_dependencies = False  # checks the answer alone: never waits for a reference

    def __init__(self, name: str = CHECKS_EVALUATOR) -> None:
        self.name = name
        self.model: str | None = None
        self.threshold: float | None = None

    def prompt(self) -> tuple[str, str] | None:
        """No prompt: nothing to version."""
        return None

    def group_of(self, item: WorkItem) -> str | None:
        """Not a group evaluator."""
        return None

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        """One aspect per check of the answer's scenario."""
        return tuple(dict.fromkeys(check_label(n, v) for n, v in items[0].checks))

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """Run the check named ``aspect`` on the subject's answer."""
        from qualspec.engine import Verdict

        item, response = subject.items[0], subject.responses[0]
        for name, value in item.checks:
            if check_label(name, value) == aspect:
                ok, reason = run_check(name, value, response.text or "")
                return Verdict(score=10.0 if ok else 0.0, passed=ok, reasoning=reason)
        return Verdict(unscored_reason=f"no such check in the scenario: {aspect[:80]}")


def create(config: EvaluatorConfig) -> ExpectEvaluator:
    """The factory behind the ``expect`` entry point."""
    from qualspec.errors import ConfigError

    if config.options or config.model:
        raise ConfigError(
            f"evaluator {config.label!r} of type expect takes no model and no options: its "
            "checks come from each scenario's expect:"
        )
    return ExpectEvaluator(config.name or CHECKS_EVALUATOR)
