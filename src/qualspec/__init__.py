"""qualspec: LLM-judged, qualitative evaluation.

Public names are imported lazily so that ``import qualspec`` (and ``qualspec --help``)
stays fast; ``from qualspec import Evaluation`` loads only what it needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qualspec.lazy import lazy_exports
from qualspec.version import __version__

_EXPORTS: dict[str, str] = {
    "AtTemperature": "qualspec.spec",
    "BaseEvaluator": "qualspec.engine",
    "CallOptions": "qualspec.engine",
    "Candidate": "qualspec.spec",
    "Comparison": "qualspec.spec",
    "Evaluation": "qualspec.spec",
    "EvalContext": "qualspec.engine",
    "EvaluatorConfig": "qualspec.spec",
    "Evaluator": "qualspec.engine",
    "ExecuteOptions": "qualspec.engine",
    "Reply": "qualspec.engine",
    "Session": "qualspec.engine",
    "Subject": "qualspec.engine",
    "Usage": "qualspec.engine",
    "Verdict": "qualspec.engine",
    "JudgeConfig": "qualspec.spec",
    "ProviderConfig": "qualspec.spec",
    "RetryPolicy": "qualspec.engine",
    "Role": "qualspec.spec",
    "Rubric": "qualspec.spec",
    "RunOutcome": "qualspec.engine",
    "Scenario": "qualspec.spec",
    "load_suite": "qualspec.spec",
    "evaluator": "qualspec.engine",
    "run": "qualspec.engine",
}

__all__ = [
    "AtTemperature",
    "BaseEvaluator",
    "CallOptions",
    "Candidate",
    "Comparison",
    "EvalContext",
    "Evaluation",
    "Evaluator",
    "EvaluatorConfig",
    "ExecuteOptions",
    "JudgeConfig",
    "ProviderConfig",
    "Reply",
    "RetryPolicy",
    "Role",
    "Rubric",
    "RunOutcome",
    "Scenario",
    "Session",
    "Subject",
    "Usage",
    "Verdict",
    "__version__",
    "evaluator",
    "load_suite",
    "run",
]

if TYPE_CHECKING:
    from qualspec.engine import (
        BaseEvaluator,
        CallOptions,
        EvalContext,
        Evaluator,
        ExecuteOptions,
        Reply,
        RetryPolicy,
        RunOutcome,
        Session,
        Subject,
        Usage,
        Verdict,
        evaluator,
        run,
    )
    from qualspec.spec import (
        AtTemperature,
        Candidate,
        Comparison,
        Evaluation,
        EvaluatorConfig,
        JudgeConfig,
        ProviderConfig,
        Role,
        Rubric,
        Scenario,
        load_suite,
    )


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
