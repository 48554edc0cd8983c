"""qualspec.spec: the suite models, built-in rubrics and the YAML/Python loaders.

A suite is an :class:`Evaluation`: candidates x roles x scenarios x temperatures x runs.
Write it in YAML or in Python and load it with :func:`load_suite`, which reports every
problem as ``path:line:col: error: field: message``.

System prompt precedence: ``role.system_prompt`` > ``scenario.system_prompt`` >
``candidate.system_prompt`` (the first that is set is sent).
"""

from qualspec.spec._check import criteria_issues
from qualspec.spec._input_stream import StreamedRows
from qualspec.spec._inputs import InputRow, render_prompt
from qualspec.spec._load import LoadedSuite, json_schema, load_evaluation, load_suite
from qualspec.spec._models import (
    CHECK_NAMES,
    COMBINE_METHODS,
    COMPARISON_DIMENSIONS,
    DEFAULT_JUDGE_MODEL,
    DEFAULT_THRESHOLD,
    JSON_SCHEMA_KEYWORDS,
    TEMPERATURE_PRESETS,
    AtTemperature,
    Behavior,
    Candidate,
    Comparison,
    Evaluation,
    EvaluatorConfig,
    ExpectCheck,
    JudgeConfig,
    PanelMember,
    ProviderConfig,
    Role,
    Rubric,
    Scenario,
)
from qualspec.spec._rubrics import BUILTIN_RUBRICS
from qualspec.spec._structured import (
    DEFAULT_GRADER_THRESHOLD,
    FieldSpec,
    GraderConfig,
    OutputSchema,
    ReferenceConfig,
)

__all__ = [
    "AtTemperature",
    "BUILTIN_RUBRICS",
    "Behavior",
    "CHECK_NAMES",
    "COMBINE_METHODS",
    "COMPARISON_DIMENSIONS",
    "Candidate",
    "Comparison",
    "DEFAULT_GRADER_THRESHOLD",
    "DEFAULT_JUDGE_MODEL",
    "DEFAULT_THRESHOLD",
    "Evaluation",
    "EvaluatorConfig",
    "ExpectCheck",
    "FieldSpec",
    "GraderConfig",
    "InputRow",
    "JSON_SCHEMA_KEYWORDS",
    "JudgeConfig",
    "LoadedSuite",
    "OutputSchema",
    "PanelMember",
    "ProviderConfig",
    "ReferenceConfig",
    "Role",
    "Rubric",
    "Scenario",
    "StreamedRows",
    "TEMPERATURE_PRESETS",
    "criteria_issues",
    "json_schema",
    "load_evaluation",
    "load_suite",
    "render_prompt",
]
