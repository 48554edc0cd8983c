"""The deterministic checks of an answer (``expect:``) and the JSON Schema subset they accept."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, StrictInt, model_validator

from qualspec.spec._base import _Model

__all__ = ["CHECK_NAMES", "JSON_SCHEMA_KEYWORDS", "ExpectCheck", "schema_problem"]


CHECK_NAMES = (
    "contains",
    "not_contains",
    "icontains",
    "regex",
    "equals",
    "starts_with",
    "max_words",
    "max_chars",
    "is_json",
    "json_schema",
    "refusal",
)


JSON_SCHEMA_KEYWORDS = (
    "type",
    "enum",
    "const",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
)
"""The JSON Schema keywords a ``json_schema:`` check supports (others are refused at load,
so that no part of a schema is silently ignored)."""

_SCHEMA_NOTES = ("$schema", "$id", "$comment", "title", "description", "default", "examples")
_JSON_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def schema_problem(schema: Any, where: str = "json_schema") -> str | None:
    """What a ``json_schema:`` check cannot use in ``schema``, or None when it is usable.

    Example:
        >>> schema_problem({"type": "objekt"})
        "json_schema.type: unknown type 'objekt'; did you mean 'object'?"
    """
    import re

    from qualspec.messages import did_you_mean

    def hint(word: str, options: tuple[str, ...]) -> str:
        return did_you_mean(word, options, before="; ")

    if not isinstance(schema, dict):
        return f"{where}: give a mapping (a JSON Schema), got {type(schema).__name__}"
    for key, value in schema.items():
        at = f"{where}.{key}"
        if key in _SCHEMA_NOTES:
            continue
        if key not in JSON_SCHEMA_KEYWORDS:
            return (
                f"{at}: unsupported keyword{hint(str(key), JSON_SCHEMA_KEYWORDS)} "
                f"(supported: {', '.join(JSON_SCHEMA_KEYWORDS)})"
            )
        if key == "type":
            names = value if isinstance(value, list) else [value]
            for name in names:
                if name not in _JSON_TYPES:
                    return f"{at}: unknown type {name!r}{hint(str(name), _JSON_TYPES)}"
        elif key in ("enum", "required") and not isinstance(value, list):
            return f"{at}: give a list"
        elif key == "required" and not all(isinstance(k, str) for k in value):
            return f"{at}: give a list of key names"
        elif key == "properties":
            if not isinstance(value, dict):
                return f"{at}: give a mapping of key -> schema"
            for name, sub in value.items():
                found = schema_problem(sub, f"{at}.{name}")
                if found:
                    return found
        elif key == "items":
            found = schema_problem(value, at)
            if found:
                return found
        elif key == "additionalProperties" and not isinstance(value, bool):
            return f"{at}: only true or false is supported"
        elif key in ("minItems", "maxItems", "minLength", "maxLength") and not _is_count(value):
            return f"{at}: give a whole number >= 0"
        elif key in ("minimum", "maximum") and not _is_number(value):
            return f"{at}: give a number"
        elif key == "pattern":
            try:
                re.compile(str(value))
            except re.error as exc:
                return f"{at}: {value!r} does not compile: {exc}"
    return None


class ExpectCheck(_Model):
    """One deterministic check of an answer (``expect:``), run without a model call.

    Exactly one field is set per entry. Example (YAML)::

        expect:
          - contains: Paris            # case-sensitive substring
          - icontains: paris           # case-insensitive substring
          - not_contains: London
          - regex: "\\bParis\\b"
          - equals: "Paris."           # the whole answer, trimmed
          - starts_with: "The"
          - max_words: 50
          - max_chars: 400
          - is_json: true              # the answer (or its ```json block) parses as JSON
          - json_schema: {type: object, required: [city]}
          - refusal: false             # true: must refuse; false: must not refuse

    ``json_schema`` takes the keywords of :data:`JSON_SCHEMA_KEYWORDS` (and annotations
    such as ``title``); any other keyword is an error, never silently ignored.
    """

    # `equals: 42` means the text "42"
    model_config = ConfigDict(coerce_numbers_to_str=True)

    contains: str | None = Field(default=None, min_length=1)
    not_contains: str | None = Field(default=None, min_length=1)
    icontains: str | None = Field(default=None, min_length=1)
    regex: str | None = Field(default=None, min_length=1)
    equals: str | None = None
    starts_with: str | None = Field(default=None, min_length=1)
    max_words: StrictInt | None = Field(default=None, ge=1)
    max_chars: StrictInt | None = Field(default=None, ge=1)
    is_json: bool | None = None
    json_schema: dict[str, Any] | None = None
    refusal: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_key_mapping(cls, value: Any) -> Any:
        if isinstance(value, str):
            example = f"{value}: true" if value in CHECK_NAMES else "contains: Paris"
            raise ValueError(
                f"an expect entry is one `check: value` mapping (e.g. `- {example}`), got "
                f"{value!r}; checks: " + ", ".join(CHECK_NAMES)
            )
        return value

    @model_validator(mode="after")
    def _exactly_one(self) -> ExpectCheck:
        given = [n for n in CHECK_NAMES if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one check per entry (e.g. `- contains: Paris`); checks: "
                + ", ".join(CHECK_NAMES)
            )
        if self.regex is not None:
            import re

            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"regex {self.regex!r} does not compile: {exc}") from None
        if self.json_schema is not None:
            problem = schema_problem(self.json_schema)
            if problem:
                raise ValueError(problem)
        return self

    @property
    def name(self) -> str:
        """The check's kind, e.g. ``"contains"``."""
        return next(n for n in CHECK_NAMES if getattr(self, n) is not None)

    @property
    def value(self) -> Any:
        """The check's argument (``"Paris"``, ``50``, a schema, ``True``)."""
        return getattr(self, self.name)
