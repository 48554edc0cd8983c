"""qualspec: LLM-judged, qualitative evaluation.

Public names are imported lazily so that ``import qualspec`` (and ``qualspec --help``)
stays fast; ``from qualspec import Evaluation`` loads only what it needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "AtTemperature": "qualspec.spec",
    "Candidate": "qualspec.spec",
    "Evaluation": "qualspec.spec",
    "ExecuteOptions": "qualspec.engine._execute",
    "JudgeConfig": "qualspec.spec",
    "ProviderConfig": "qualspec.spec",
    "RetryPolicy": "qualspec.engine._retry",
    "Role": "qualspec.spec",
    "Rubric": "qualspec.spec",
    "RunOutcome": "qualspec.engine._run",
    "Scenario": "qualspec.spec",
    "load_suite": "qualspec.spec",
    "run": "qualspec.engine._api",
}

__all__ = [
    "AtTemperature",
    "Candidate",
    "Evaluation",
    "ExecuteOptions",
    "JudgeConfig",
    "ProviderConfig",
    "RetryPolicy",
    "Role",
    "Rubric",
    "RunOutcome",
    "Scenario",
    "__version__",
    "load_suite",
    "run",
]

if TYPE_CHECKING:
    from qualspec.engine._api import run
    from qualspec.engine._execute import ExecuteOptions
    from qualspec.engine._retry import RetryPolicy
    from qualspec.engine._run import RunOutcome
    from qualspec.spec import (
        AtTemperature,
        Candidate,
        Evaluation,
        JudgeConfig,
        ProviderConfig,
        Role,
        Rubric,
        Scenario,
        load_suite,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'qualspec' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
