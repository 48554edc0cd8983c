"""Loading a suite file (YAML or Python) into a validated, resolved :class:`LoadedSuite`."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from qualspec.errors import SpecError, SpecIssue
from qualspec.plugins import scan_installed
from qualspec.spec._check import check_suite
from qualspec.spec._inputs import InputRow
from qualspec.spec._issues import Locator, did_you_mean, sort_issues, validation_issues
from qualspec.spec._models import Evaluation
from qualspec.spec._paths import FieldPath, FixedLocator, format_field
from qualspec.spec._presets import TEMPERATURE_PRESETS

__all__ = ["LoadedSuite", "json_schema", "load_evaluation", "load_suite"]

_SUFFIXES = (".yaml", ".yml", ".py")
_NO_FILE = "<evaluation>"


@dataclass(frozen=True)
class LoadedSuite:
    """A validated suite with its inputs resolved.

    Attributes:
        evaluation: The suite.
        path: The suite file (resolved); ``Path("<evaluation>")`` for one built in code.
        base_dir: The directory relative inputs paths are read from.
        content_hash: sha256 (hex) of the file's bytes, or of the Evaluation's JSON.
        inputs: Scenario name -> input rows, for the scenarios that have inputs.
        shown: The path as it is printed in issues (as given; ``<evaluation>``).
        locator: Where each field is in the file, for issues found after loading.
    """

    evaluation: Evaluation
    path: Path
    base_dir: Path
    content_hash: str
    inputs: dict[str, Sequence[InputRow]] = field(default_factory=dict)
    shown: str = _NO_FILE
    locator: Locator = field(default_factory=FixedLocator, compare=False, repr=False)

    def issue(self, path: FieldPath, message: str) -> SpecIssue:
        """An issue at a field of the suite (``path`` as in ``("candidates", 0, "model")``)."""
        line, col = self.locator.find(path)
        return SpecIssue(self.shown, line, col, format_field(path), message)


def _fail(shown: str, message: str, line: int = 1, col: int = 1) -> SpecError:
    return SpecError([SpecIssue(shown, line, col, "", message)])


def load_suite(path: str | Path) -> LoadedSuite:
    """Read, validate and resolve a suite file.

    Args:
        path: A ``.yaml``/``.yml`` file with the suite's fields, or a ``.py`` file that
            defines an :class:`Evaluation` at module level.

    Returns:
        The loaded suite.

    Raises:
        SpecError: Listing every problem found, each as ``path:line:col: error: field: msg``.

    Example::

        suite = load_suite("examples/quickstart.yaml")
        print(suite.evaluation.name, len(suite.evaluation.scenarios))
    """
    shown = str(path)
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix not in _SUFFIXES:
        raise _fail(shown, f"unsupported suite file type '{suffix or file.name}'; use .yaml or .py")
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise _fail(shown, "file not found; check the path") from None
    except OSError as exc:
        raise _fail(shown, f"cannot read the file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _fail(shown, f"not UTF-8 text ({exc.reason}); save the file as UTF-8") from None
    resolved = file.resolve()
    if suffix == ".py":
        evaluation, data, locator, issues = _from_python(text, resolved, shown)
    else:
        evaluation, data, locator, issues = _from_yaml(text, shown)
    inputs: dict[str, Sequence[InputRow]] = {}
    if data is not None and locator is not None:
        more, inputs = check_suite(
            data, file=shown, locator=locator, base_dir=resolved.parent, shown_dir=file.parent
        )
        issues.extend(more)
    if issues or evaluation is None:
        raise SpecError(sort_issues(issues, shown))
    return LoadedSuite(
        evaluation=evaluation,
        path=resolved,
        base_dir=resolved.parent,
        content_hash=hashlib.sha256(raw).hexdigest(),
        inputs=inputs,
        shown=shown,
        locator=locator if locator is not None else FixedLocator(),
    )


def _from_python(
    text: str, resolved: Path, shown: str
) -> tuple[Evaluation | None, dict[str, Any] | None, Locator | None, list[SpecIssue]]:
    from qualspec.spec._python import load_python

    evaluation, locator, issues = load_python(text, resolved, shown)
    data = evaluation.model_dump() if evaluation is not None else None
    return evaluation, data, locator, issues


def _from_yaml(
    text: str, shown: str
) -> tuple[Evaluation | None, dict[str, Any] | None, Locator | None, list[SpecIssue]]:
    from qualspec.spec._yaml import parse_yaml

    data, positions, issues = parse_yaml(text, shown)
    if issues:
        return None, None, None, issues
    if data is None:
        message = "the file is empty; a suite needs at least name:, candidates: and scenarios:"
        return None, None, None, [SpecIssue(shown, 1, 1, "", message)]
    if not isinstance(data, dict):
        line, col = positions.find(())
        kind = "a list" if isinstance(data, list) else "a single value"
        message = (
            f"the top level is {kind}; a suite is a mapping of fields "
            "(name:, candidates:, scenarios:, ...)"
        )
        return None, None, None, [SpecIssue(shown, line, col, "", message)]
    from qualspec.spec._behaviors import BehaviorLocator, expand_behaviors

    data, origins, unknown = expand_behaviors(data)
    locator: Locator = BehaviorLocator(positions, origins) if origins else positions
    if unknown:
        from qualspec.spec._behaviors import BUILTIN_BEHAVIORS

        own = [b.get("name") for b in data.get("behaviors") or [] if isinstance(b, dict)]
        known = [*own, *BUILTIN_BEHAVIORS]
        for k, name in unknown:
            line, col = positions.find(("behaves_like", k))
            issues.append(
                SpecIssue(
                    shown,
                    line,
                    col,
                    f"behaves_like[{k}]",
                    f"unknown behavior {name!r}{did_you_mean(str(name), map(str, known))}; "
                    f"define it under behaviors: (defined: {', '.join(map(str, known)) or 'none'})",
                )
            )
        return None, None, None, issues
    evaluation: Evaluation | None = None
    scan_installed()  # the providers' registry, read before pydantic reads it too
    try:
        evaluation = Evaluation.model_validate(copy.deepcopy(data))
    except ValidationError as exc:
        issues = validation_issues(exc, file=shown, locator=locator, root=Evaluation)
    return evaluation, data, locator, issues


def load_evaluation(evaluation: Evaluation, base_dir: Path | str = ".") -> LoadedSuite:
    """Check and resolve an :class:`Evaluation` built in code (library use).

    Args:
        evaluation: The suite.
        base_dir: The directory relative inputs file paths are read from.

    Returns:
        The loaded suite; ``content_hash`` is the sha256 of the Evaluation's JSON.

    Raises:
        SpecError: Listing every problem; issues are printed at ``<evaluation>:1:1``.
    """
    base = Path(base_dir).resolve()
    issues, inputs = check_suite(
        evaluation.model_dump(),
        file=_NO_FILE,
        locator=FixedLocator(),
        base_dir=base,
        shown_dir=Path(base_dir),
    )
    if issues:
        raise SpecError(sort_issues(issues, _NO_FILE))
    return LoadedSuite(
        evaluation=evaluation,
        path=Path(_NO_FILE),
        base_dir=base,
        content_hash=hashlib.sha256(evaluation.model_dump_json().encode()).hexdigest(),
        inputs=inputs,
    )


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the YAML suite format (for editors and ``qualspec schema``)."""
    schema = Evaluation.model_json_schema()
    properties = schema["properties"]
    judge = properties["judge"]
    properties["judge"] = {
        "anyOf": [
            {"type": "string", "description": "The judge model address, e.g. local/smollm2."},
            {k: v for k, v in judge.items() if k != "default"},
        ],
        "description": "The judge: a model address, or a mapping with model and threshold.",
    }
    temperatures = properties["temperatures"]
    temperatures["anyOf"] = [
        {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 2}},
        {"type": "string", "enum": list(TEMPERATURE_PRESETS)},
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "qualspec suite",
        **{k: v for k, v in schema.items() if k != "title"},
    }
