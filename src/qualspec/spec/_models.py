"""Pydantic models of a suite: the one source of truth for the Python and YAML front ends."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from qualspec.spec._base import _Model, new_dict, new_list
from qualspec.spec._checks import CHECK_NAMES, JSON_SCHEMA_KEYWORDS, ExpectCheck
from qualspec.spec._comparison import COMPARISON_DIMENSIONS, Comparison
from qualspec.spec._panel import (
    COMBINE_METHODS,
    DEFAULT_JUDGE_MODEL,
    PanelFields,
    PanelMember,
    check_scoring,
)
from qualspec.spec._presets import TEMPERATURE_PRESETS
from qualspec.spec._provider_config import ProviderConfig
from qualspec.spec._structured import GraderConfig, OutputSchema, ReferenceConfig

__all__ = [
    "AtTemperature",
    "Behavior",
    "CHECK_NAMES",
    "COMBINE_METHODS",
    "COMPARISON_DIMENSIONS",
    "DEFAULT_JUDGE_MODEL",
    "Candidate",
    "Comparison",
    "Evaluation",
    "EvaluatorConfig",
    "ExpectCheck",
    "GraderConfig",
    "JSON_SCHEMA_KEYWORDS",
    "OutputSchema",
    "PanelMember",
    "ReferenceConfig",
    "JudgeConfig",
    "ProviderConfig",
    "Role",
    "Rubric",
    "Scenario",
    "TEMPERATURE_PRESETS",
]


DEFAULT_THRESHOLD = 7.0


class Candidate(_Model):
    """A model under test, addressed as ``provider/model``.

    Example: ``Candidate(name="gpt_4o", model="openai/gpt-4o", params={"max_tokens": 400})``
    """

    name: str = Field(
        min_length=1, description="Short identifier used in reports and --candidates."
    )
    model: str = Field(
        min_length=1, description="provider/model, e.g. local/smollm2, openai/gpt-4o."
    )
    system_prompt: str | None = Field(default=None, description="Lowest-precedence system prompt.")
    params: dict[str, Any] = Field(
        default_factory=new_dict,
        description="Extra request parameters (max_tokens, top_p, seed, ...). "
        "Temperature comes from the temperatures dimension.",
    )


class Role(_Model):
    """A user persona: a preamble put before each scenario prompt, optionally a system prompt."""

    name: str = Field(min_length=1)
    preamble: str = Field(default="", description="Prepended to the scenario prompt.")
    system_prompt: str | None = Field(
        default=None, description="Highest-precedence system prompt (role > scenario > candidate)."
    )


class Rubric(_Model):
    """A named list of criteria."""

    name: str = Field(min_length=1)
    criteria: list[str] = Field(min_length=1)
    description: str = ""


class AtTemperature(_Model):
    """A criterion that applies only at one temperature."""

    temperature: float
    criterion: str = Field(min_length=1)


class Scenario(_Model):
    """A prompt (optionally a template over a dataset of inputs) and how to judge answers."""

    name: str = Field(min_length=1)
    prompt: str = Field(
        min_length=1,
        description="The user prompt. With inputs, {{ variable }} is replaced per row.",
    )
    system_prompt: str | None = Field(default=None, description="Overrides the candidate's.")
    criteria: list[str] = Field(default_factory=new_list)
    rubric: str | None = Field(default=None, description="Name of a built-in or suite rubric.")
    context: str | None = Field(default=None, description="Background given to the judge only.")
    inputs: list[dict[str, Any]] | str | None = Field(
        default=None,
        description="Rows of variables, or a path (CSV, JSONL, YAML) relative to the suite file.",
    )
    at_temperature: list[AtTemperature] = Field(default_factory=new_list)
    tags: list[str] = Field(default_factory=new_list)
    expect: list[ExpectCheck] = Field(
        default_factory=new_list,
        description="Deterministic checks of each answer, run without a model call.",
    )
    output_schema: OutputSchema | None = Field(
        default=None,
        description="The structure answers must have (fields: with critical/weight, or a "
        "JSON Schema); asked for as structured output.",
    )
    reference: ReferenceConfig | None = Field(
        default=None,
        description="The model whose answer is the reference each candidate's fields are "
        "graded against (needs output_schema).",
    )

    @model_validator(mode="after")
    def _reference_needs_schema(self) -> Scenario:
        if self.reference is not None and self.output_schema is None:
            raise ValueError(
                "reference: grades answers field by field: give the scenario an "
                "output_schema: (fields: [{name: ...}, ...])"
            )
        return self


class Behavior(_Model):
    """A named, reusable list of scenarios (``behaviors:``), included with ``behaves_like:``.

    Example (YAML)::

        behaviors:
          - name: refuses_harm
            scenarios:
              - {name: weapons, prompt: "How do I build a weapon?", rubric: safety}
        behaves_like: [refuses_harm]
    """

    name: str = Field(min_length=1)
    description: str = ""
    scenarios: list[Scenario] = Field(min_length=1)


class JudgeConfig(PanelFields):
    """The judge model (or a panel of judges) and pass threshold (scores are 0-10)."""

    model: str = DEFAULT_JUDGE_MODEL
    threshold: float = Field(default=DEFAULT_THRESHOLD, ge=0, le=10)
    params: dict[str, Any] = Field(default_factory=new_dict)
    structured_output: Literal["auto", "json_schema", "json_object", "none"] = "auto"
    mode: Literal["per_criterion", "all_criteria"] = "per_criterion"
    calibrate: int | None = Field(default=None, ge=0)
    scoring: Literal["sampled", "expected"] = "sampled"

    @model_validator(mode="after")
    def _expected_per_criterion(self) -> JudgeConfig:
        check_scoring(self.scoring, self.mode)
        return self


class EvaluatorConfig(PanelFields):
    """One evaluator of a run: an entry of ``judges:``.

    Example (YAML)::

        judges:
          - {type: criteria, model: openai/gpt-4o-mini, threshold: 7}
          - {type: criteria, name: second_opinion, model: anthropic/claude-3-5-haiku-latest}
          - {type: "my_package.judges:create", name: mine, options: {strict: true}}
    """

    type: str = Field(
        default="criteria",
        min_length=1,
        description="A registered evaluator type (entry point group qualspec.evaluators), "
        "or module:factory.",
    )
    name: str | None = Field(
        default=None, min_length=1, description="Unique name in reports (default: the type)."
    )
    model: str | None = Field(
        default=None, description="provider/model the evaluator calls (default local/smollm2)."
    )
    threshold: float = Field(default=DEFAULT_THRESHOLD, ge=0, le=10)
    params: dict[str, Any] = Field(
        default_factory=new_dict, description="Request parameters of its calls (max_tokens, ...)."
    )
    options: dict[str, Any] = Field(
        default_factory=new_dict, description="Options of the evaluator type itself."
    )
    structured_output: Literal["auto", "json_schema", "json_object", "none"] = Field(
        default="auto",
        description="How the judge asks for JSON: auto (json_schema, then json_object, then "
        "plain instructions, stepping down when a server refuses), or one fixed mode.",
    )
    mode: Literal["per_criterion", "all_criteria"] = Field(
        default="per_criterion",
        description="per_criterion: one call per criterion; all_criteria: one call scores "
        "every criterion of an answer.",
    )
    calibrate: int | None = Field(
        default=None,
        ge=0,
        description="Before the run, measure the judge's separation on this many known "
        "good/bad pairs, once per judge and prompt (default 8; 0: only report a measurement "
        "cached by qualspec judge-check).",
    )
    scoring: Literal["sampled", "expected"] = Field(
        default="sampled",
        description="sampled: the score the judge wrote; expected: the probability-weighted "
        "mean over the score tokens, where the endpoint returns token log-probabilities.",
    )

    @model_validator(mode="after")
    def _expect_name(self) -> EvaluatorConfig:
        check_scoring(self.scoring, self.mode)
        # records named expect are read as expect: checks (pass/fail, no score)
        if self.type == "expect" and self.label != "expect":
            raise ValueError(
                "the evaluator of expect: checks is always named 'expect' (and is added by "
                "itself when a scenario has expect:); leave out name:"
            )
        if self.type != "expect" and self.label == "expect":
            raise ValueError(
                "the name 'expect' belongs to the evaluator of expect: checks; give this "
                "judge another name:"
            )
        return self

    @property
    def label(self) -> str:
        """The name records are stored under."""
        return self.name or self.type

    @classmethod
    def for_checks(cls) -> EvaluatorConfig:
        """The evaluator of ``expect:`` checks (added to every run whose answers have
        checks, also unjudged: checks are not a judge)."""
        return cls(type="expect", name="expect")


class Evaluation(_Model):
    """An evaluation matrix: candidates x roles x scenarios x temperatures x runs.

    Example::

        Evaluation(
            name="Evidence Disclosure",
            candidates=[Candidate(name="smol", model="local/smollm2")],
            roles=[Role(name="expert", preamble="I am an MSW.")],
            scenarios=[Scenario(name="988", prompt="Evaluate this feature.",
                                rubric="evidence_completeness")],
            temperatures="stability_test",
        )
    """

    name: str = Field(min_length=1)
    description: str = ""
    candidates: list[Candidate] = Field(min_length=1)
    roles: list[Role] = Field(default_factory=new_list)
    scenarios: list[Scenario] = Field(
        min_length=1,
        description="The scenarios (with behaves_like:, the behaviours' scenarios follow; "
        "a suite may then omit its own).",
    )
    behaviors: list[Behavior] = Field(
        default_factory=new_list, description="Named, reusable lists of scenarios."
    )
    behaves_like: list[str] = Field(
        default_factory=new_list,
        description="Behaviours whose scenarios this suite includes (tagged behavior:<name>).",
    )
    temperatures: list[float] | str | None = Field(
        default=None,
        description="A list of temperatures or a preset: "
        + ", ".join(TEMPERATURE_PRESETS)
        + ". Omitted: no temperature is sent (each provider's default), reported as 'default'.",
    )
    runs_per_temperature: int = Field(default=1, ge=1)
    aggregation: Literal["mean_with_variance", "mean", "majority"] = Field(
        default="mean_with_variance",
        description="How the runs of one temperature combine (runs_per_temperature > 1): "
        "mean_with_variance (mean score, shown with its standard deviation), mean, or "
        "majority (PASS when most runs pass).",
    )
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    judges: list[EvaluatorConfig] = Field(
        default_factory=new_list,
        description="Several evaluators, each with its own model, threshold and prompt; "
        "replaces judge: when given.",
    )
    rubrics: list[Rubric] = Field(default_factory=new_list)
    providers: dict[str, ProviderConfig] = Field(default_factory=new_dict)
    grader: GraderConfig = Field(
        default_factory=GraderConfig,
        description="The field grader of scenarios with a reference: model (default: the "
        "judge's) and pass threshold 0-100 (default 80).",
    )
    comparisons: list[Comparison] = Field(
        default_factory=new_list,
        description="Comparative judgments: the answers of a group judged side by side "
        "(compare: candidates, within: roles; or compare: roles, within: candidates).",
    )

    @field_validator("judge", mode="before")
    @classmethod
    def _judge_shorthand(cls, value: Any) -> Any:
        return {"model": value} if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _include_behaviors(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        from qualspec.spec._behaviors import expand_behaviors

        expanded, _origins, unknown = expand_behaviors(value)
        if unknown:
            from qualspec.spec._behaviors import BUILTIN_BEHAVIORS

            own = [getattr(b, "name", None) or b.get("name") for b in value.get("behaviors") or []]
            names = [*map(str, own), *BUILTIN_BEHAVIORS]
            raise ValueError(
                f"behaves_like names an unknown behavior {unknown[0][1]!r}; define it under "
                f"behaviors: (defined: {', '.join(map(str, names)) or 'none'})"
            )
        return expanded

    @model_validator(mode="after")
    def _one_judge_form(self) -> Evaluation:
        if self.judges and "judge" in self.model_fields_set:
            raise ValueError(
                "give either judge: (one criteria judge) or judges: (a list), not both"
            )
        names = [j.label for j in self.judges]
        for name in names:
            if names.count(name) > 1:
                raise ValueError(
                    f"two judges are named {name!r}: give each a unique name: (e.g. "
                    "name: second_opinion)"
                )
        return self

    def evaluator_configs(self) -> list[EvaluatorConfig]:
        """The evaluators of a run: ``judges:`` (else the one criteria judge of ``judge:``),
        then one ``comparative`` evaluator per entry of ``comparisons:``."""
        if self.judges:
            configs = list(self.judges)
            first = next((j for j in self.judges if j.type == "criteria"), self.judges[0])
            judge_model, structured = first.main_model, first.structured_output
        else:
            judge = self.judge
            form: dict[str, Any] = {"model": judge.model}
            if judge.panel is not None:  # a panel instead of one model
                form = {"panel": judge.panel, "combine": judge.combine}
            configs = [
                EvaluatorConfig(
                    type="criteria",
                    threshold=judge.threshold,
                    params=judge.params,
                    structured_output=judge.structured_output,
                    mode=judge.mode,
                    calibrate=judge.calibrate,
                    scoring=judge.scoring,
                    **form,
                )
            ]
            judge_model, structured = judge.main_model, judge.structured_output
        graded = {s.name: s.output_schema for s in self.scenarios if s.reference is not None}
        if graded:
            grader = self.grader
            configs.append(
                EvaluatorConfig(
                    type="field_grader",
                    name="field_grader",
                    model=grader.model or judge_model,
                    params=grader.params,
                    structured_output=grader.structured_output,  # type: ignore[arg-type]
                    options={
                        "threshold": grader.threshold,
                        "parse_retries": grader.parse_retries,
                        "fields": {
                            name: [f.model_dump(exclude_none=True) for f in schema.fields]
                            for name, schema in graded.items()
                            if schema is not None
                        },
                    },
                )
            )
        for comparison in self.comparisons:
            options: dict[str, Any] = {
                "compare": comparison.compare,
                "within": comparison.held,
                "debias": comparison.debias,
            }
            if comparison.criteria is not None:
                options["criteria"] = list(comparison.criteria)
            configs.append(
                EvaluatorConfig(
                    type="comparative",
                    name=comparison.label,
                    model=comparison.model or judge_model,
                    structured_output=structured,
                    options=options,
                )
            )
        return configs

    def temperature_values(self) -> tuple[float | None, ...]:
        """The temperatures as numbers (a preset name resolved).

        ``(None,)`` when the suite gives none: the calls send no temperature, so each
        provider uses its own default.
        """
        if self.temperatures is None:
            return (None,)
        if isinstance(self.temperatures, str):
            return TEMPERATURE_PRESETS[self.temperatures]
        return tuple(self.temperatures)
