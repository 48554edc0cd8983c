"""The public API is what the ``__init__`` files export, and no package reaches into
another package's private modules (the equivalent of ruff's TID251 for a whole layer)."""

from __future__ import annotations

import ast
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


def _private_imports(path: Path) -> list[tuple[int, str]]:
    """Imports in ``path`` of a private module (``_name``) of another qualspec package."""
    rel = path.relative_to(SRC.parent).with_suffix("").parts  # ("qualspec", "engine", "_x")
    own = rel[:2] if len(rel) > 2 else rel[:1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] != "qualspec":
                continue
            private = next((i for i, p in enumerate(parts) if p.startswith("_")), None)
            if private is not None and tuple(parts[:private]) != own:
                found.append((node.lineno, name))
    return found


def test_no_package_imports_another_packages_private_modules() -> None:
    offenders = [
        f"{path.relative_to(SRC.parent)}:{line}: {name}"
        for path in sorted(SRC.rglob("*.py"))
        if "migrations" not in path.parts
        for line, name in _private_imports(path)
    ]
    assert not offenders, "import these from the package's __init__ instead:\n" + "\n".join(
        offenders
    )


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
