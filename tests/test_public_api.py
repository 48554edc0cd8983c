"""The public API is what the ``__init__`` files export (that no file reaches into another
package's private modules: ``tests/test_private_imports.py``)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import qualspec

SRC = Path(qualspec.__file__).resolve().parent

PUBLIC = {
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
}

PACKAGES = sorted(p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists())


def test_top_level_exports_are_exactly_the_public_api() -> None:
    assert set(qualspec.__all__) == PUBLIC
    assert list(qualspec.__all__) == sorted(qualspec.__all__)
    for name in qualspec.__all__:
        assert getattr(qualspec, name) is not None, name


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_exports_resolve(package: str) -> None:
    module = importlib.import_module(f"qualspec.{package}")
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"qualspec.{package} has no __all__"
    for name in exported:
        assert not name.startswith("_") or name == "__version__", name
        getattr(module, name)  # every exported name resolves (lazy ones included)


def test_engine_exports_what_the_rest_of_the_code_uses() -> None:
    import qualspec.engine as engine

    for name in ("Session", "Evaluator", "Verdict", "Subject", "ExecuteOptions", "Plan", "expand"):
        assert name in engine.__all__


def test_store_exports_the_reference_review_api() -> None:
    import qualspec.store as store

    for name in (
        "GROUND_TRUTH_STATUSES",
        "ReferenceAnswer",
        "ReferenceAuditEntry",
        "ReferenceReview",
    ):
        assert name in store.__all__, name
    import qualspec.judges as judges

    # one rule for what a grader grades against: the field grader's (judges)
    for name in ("read_reference", "reference_for_grading"):
        assert name in judges.__all__ and name not in store.__all__, name
    for method in (
        "reference_answers",
        "reference_review",
        "reference_reviews",
        "reference_override",
        "set_reference_status",
        "override_reference",
        "find_reference",
    ):
        assert callable(getattr(store.Store, method)), method
