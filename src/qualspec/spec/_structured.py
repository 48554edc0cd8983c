"""Structured tasks: a scenario's ``output_schema``, its ``reference`` model and the suite's
field ``grader`` (reference-graded testing)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from qualspec.spec._base import new_dict

__all__ = [
    "DEFAULT_GRADER_THRESHOLD",
    "FieldSpec",
    "GraderConfig",
    "OutputSchema",
    "ReferenceConfig",
]

DEFAULT_GRADER_THRESHOLD = 80.0
_FIELD_TYPES = ("string", "number", "integer", "boolean", "array", "object")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # see spec._base


class FieldSpec(_Model):
    """One graded field of a structured answer.

    ``critical`` fields count double in the weighted mean unless ``weight`` is given
    (a weight overrides it). ``type`` is the JSON type asked for (default: any scalar).
    """

    name: str = Field(min_length=1)
    critical: bool = False
    weight: float | None = Field(default=None, gt=0)
    type: str | None = None
    description: str | None = None

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str | None) -> str | None:
        if value is not None and value not in _FIELD_TYPES:
            raise ValueError(f"unknown type {value!r}: give one of {', '.join(_FIELD_TYPES)}")
        return value

    @property
    def effective_weight(self) -> float:
        """The weight in the weighted mean: ``weight``, else 2 when critical, else 1."""
        if self.weight is not None:
            return float(self.weight)
        return 2.0 if self.critical else 1.0


class OutputSchema(_Model):
    """A scenario's ``output_schema``: a field list, or a JSON Schema of an object.

    Example (YAML)::

        output_schema:
          fields:
            - {name: name, critical: true}
            - {name: industry, critical: true, weight: 3}
            - {name: founded_year, type: integer}

    or ``output_schema: {type: object, properties: {name: {type: string}}, required:
    [name]}`` (every top-level property is a field of weight 1).
    """

    fields: tuple[FieldSpec, ...] = ()
    json_schema: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _either_form(cls, value: Any) -> Any:
        if isinstance(value, OutputSchema):
            return value
        if not isinstance(value, dict):
            raise ValueError(
                "output_schema: give a mapping: `fields:` (a list of {name, critical, weight}) "
                "or a JSON Schema of an object"
            )
        if "fields" in value:
            extra = sorted(set(value) - {"fields"})
            if extra:
                raise ValueError(
                    f"output_schema: with fields: give nothing else (found {', '.join(extra)})"
                )
            return {"fields": value["fields"]}
        from qualspec.spec._checks import schema_problem

        problem = schema_problem(value, "output_schema")
        if problem:
            raise ValueError(problem)
        props = value.get("properties")
        if value.get("type") != "object" or not isinstance(props, dict) or not props:
            raise ValueError(
                "output_schema: a JSON Schema here describes an object: give type: object "
                "and properties: (or use fields:)"
            )
        return {"fields": [{"name": str(k)} for k in props], "json_schema": value}

    @model_validator(mode="after")
    def _unique(self) -> OutputSchema:
        if not self.fields:
            raise ValueError("output_schema: give at least one field")
        names = [f.name for f in self.fields]
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"output_schema: field {name!r} is listed twice")
        return self

    def to_json_schema(self) -> dict[str, Any]:
        """The JSON Schema the answer is asked for (structured output)."""
        if self.json_schema is not None:
            return dict(self.json_schema)
        scalar = ["string", "number", "integer", "boolean", "null"]
        props: dict[str, Any] = {}
        for spec in self.fields:
            prop: dict[str, Any] = {"type": [spec.type, "null"] if spec.type else scalar}
            if spec.description:
                prop["description"] = spec.description
            props[spec.name] = prop
        return {"type": "object", "properties": props, "required": [f.name for f in self.fields]}


class ReferenceConfig(_Model):
    """A scenario's ``reference``: the model whose answer the candidates are graded against."""

    model: str = Field(min_length=1, description="provider/model of the reference answers.")
    params: dict[str, Any] = Field(
        default_factory=new_dict, description="Request parameters (max_tokens, ...)."
    )

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return {"model": value} if isinstance(value, str) else value


class GraderConfig(_Model):
    """The suite's field ``grader``: its model (default: the judge's) and pass mark 0-100."""

    model: str | None = Field(default=None, description="provider/model (default: the judge's).")
    threshold: float = Field(default=DEFAULT_GRADER_THRESHOLD, ge=0, le=100)
    params: dict[str, Any] = Field(default_factory=new_dict)
    structured_output: str = Field(default="auto")
    parse_retries: int = Field(default=2, ge=0)

    @field_validator("structured_output")
    @classmethod
    def _mode(cls, value: str) -> str:
        modes = ("auto", "json_schema", "json_object", "none")
        if value not in modes:
            raise ValueError(f"structured_output: give one of {', '.join(modes)}")
        return value
