"""Pydantic models of a suite: the one source of truth for the Python and YAML front ends."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "AtTemperature",
    "Candidate",
    "Evaluation",
    "JudgeConfig",
    "ProviderConfig",
    "Role",
    "Rubric",
    "Scenario",
    "TEMPERATURE_PRESETS",
]

TEMPERATURE_PRESETS: dict[str, tuple[float, ...]] = {
    "stability_test": (0.0, 0.5, 1.0),
    "full_range": (0.0, 0.3, 0.5, 0.7, 1.0, 1.2, 1.5),
    "safety_probe": (0.0, 1.0, 1.5, 2.0),
}

DEFAULT_JUDGE_MODEL = "local/smollm2"
DEFAULT_THRESHOLD = 7.0


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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
        default_factory=dict,
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
    criteria: list[str] = Field(default_factory=list)
    rubric: str | None = Field(default=None, description="Name of a built-in or suite rubric.")
    context: str | None = Field(default=None, description="Background given to the judge only.")
    inputs: list[dict[str, Any]] | str | None = Field(
        default=None,
        description="Rows of variables, or a path (CSV, JSONL, YAML) relative to the suite file.",
    )
    at_temperature: list[AtTemperature] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)


class JudgeConfig(_Model):
    """The judge model and pass threshold (scores are 0-10)."""

    model: str = DEFAULT_JUDGE_MODEL
    threshold: float = Field(default=DEFAULT_THRESHOLD, ge=0, le=10)
    params: dict[str, Any] = Field(default_factory=dict)


class ProviderConfig(_Model):
    """A named provider connection, e.g. a private OpenAI-compatible server.

    Example (YAML)::

        providers:
          mylab: {type: openai, base_url: "http://127.0.0.1:8000/v1", api_key_env: MYLAB_KEY}
    """

    type: Literal["openai", "anthropic", "local"] = "openai"
    base_url: str | None = None
    api_key_env: str | None = None
    max_concurrency: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    temperature_range: tuple[float, float] | None = None


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
    roles: list[Role] = Field(default_factory=list)
    scenarios: list[Scenario] = Field(min_length=1)
    temperatures: list[float] | str = Field(
        default_factory=lambda: [0.0],
        description="A list of temperatures or a preset: " + ", ".join(TEMPERATURE_PRESETS),
    )
    runs_per_temperature: int = Field(default=1, ge=1)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    rubrics: list[Rubric] = Field(default_factory=list)
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)

    @field_validator("judge", mode="before")
    @classmethod
    def _judge_shorthand(cls, value: Any) -> Any:
        return {"model": value} if isinstance(value, str) else value

    def temperature_values(self) -> tuple[float, ...]:
        """The temperatures as numbers (a preset name resolved)."""
        if isinstance(self.temperatures, str):
            return TEMPERATURE_PRESETS[self.temperatures]
        return tuple(self.temperatures)
