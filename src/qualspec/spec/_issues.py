"""Turning pydantic validation errors into one-line ``path:line:col`` issues."""

from __future__ import annotations

import types
from collections.abc import Iterable, Sequence
from typing import Any, Literal, Protocol, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from qualspec.errors import SpecIssue
from qualspec.messages import did_you_mean as _suggest
from qualspec.spec._paths import FieldPath, format_field
from qualspec.spec._presets import TEMPERATURE_PRESETS

__all__ = ["Locator", "did_you_mean", "sort_issues", "validation_issues"]

Style = Literal["yaml", "python"]

# names users reach for that difflib would not match (CLI flags, the seed's DSL words)
_ALIASES = {
    "runs": "runs_per_temperature",
    "runs_per_temp": "runs_per_temperature",
    "temps": "temperatures",
    "temperature": "temperatures",
    "criterion": "criteria",
    "system": "system_prompt",
    "variants": "roles",
    "input": "inputs",
}

_UNION_HINTS = {
    "temperatures": "expected a list of numbers (e.g. [0.0, 0.7]) or a preset name "
    f"({', '.join(TEMPERATURE_PRESETS)})",
    "inputs": "expected a list of rows (mappings) or a path to a .csv, .jsonl or .yaml file",
}


class Locator(Protocol):
    """Finds the 1-based (line, column) of a field path in a suite's source."""

    def find(self, path: FieldPath, *, key: bool = False) -> tuple[int, int]:
        """Where ``path`` (its key when ``key``) starts, else its nearest known ancestor."""
        ...


def did_you_mean(word: str, options: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest option, or ``""`` when none is close."""
    return _suggest(word, options, before="; ")


def sort_issues(issues: Iterable[SpecIssue], first_file: str) -> list[SpecIssue]:
    """De-duplicated issues, the suite file's first, each file's in line/column order."""
    unique = dict.fromkeys(issues)
    return sorted(unique, key=lambda i: (i.path != first_file, i.path, i.line, i.col))


def _union_members(tp: Any) -> tuple[Any, ...] | None:
    if get_origin(tp) in (Union, types.UnionType):
        return tuple(a for a in get_args(tp) if a is not type(None))
    return None


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _member_for_label(members: Sequence[Any], label: str) -> Any:
    wanted = label.split("[", 1)[0].lower()
    for member in members:
        origin = get_origin(member) or member
        if getattr(origin, "__name__", "").lower() == wanted:
            return member
    return None


def resolve_loc(
    root: type[BaseModel] | None, loc: Sequence[str | int]
) -> tuple[FieldPath, FieldPath | None, type[BaseModel] | None]:
    """Follow a pydantic ``loc`` through the model types.

    Returns:
        The field path without union-branch labels, the path of the union field whose
        branch labels were dropped (or ``None``), and the model owning the last segment.
    """
    tp: Any = root
    clean: list[str | int] = []
    union_at: FieldPath | None = None
    owner: type[BaseModel] | None = None
    for seg in loc:
        members = _union_members(tp)
        if members is not None and len(members) == 1:
            tp, members = members[0], None
        if members is not None and isinstance(seg, str):
            union_at = tuple(clean)
            tp = _member_for_label(members, seg)
            continue
        owner = tp if _is_model(tp) else None
        if owner is not None:
            field = owner.model_fields.get(seg) if isinstance(seg, str) else None
            tp = field.annotation if field else None
        else:
            args = get_args(tp)
            origin = get_origin(tp)
            if origin is dict and len(args) == 2:
                tp = args[1]
            elif origin is tuple and isinstance(seg, int) and seg < len(args):
                tp = args[seg] if args[-1] is not Ellipsis else args[0]
            elif origin is list and args:
                tp = args[0]
            else:
                tp = None
        clean.append(seg)
    return tuple(clean), union_at, owner


def _strip(msg: str) -> str:
    return msg[len("Input should be ") :] if msg.startswith("Input should be ") else msg


def validation_issues(
    exc: ValidationError,
    *,
    file: str,
    locator: Locator,
    root: type[BaseModel] | None,
    prefix: str = "",
    style: Style = "yaml",
) -> list[SpecIssue]:
    """One issue per pydantic error, located in the source.

    Args:
        exc: The validation error.
        file: The path printed in issues.
        locator: Finds field paths (relative to ``root``) in the source.
        root: The model that was validated (``None`` if unknown).
        prefix: Printed before each field path (e.g. ``"Scenario."``).
        style: Which front end, for the "how to fix" hints.
    """
    issues: list[SpecIssue] = []
    unions: dict[FieldPath, list[tuple[FieldPath, str]]] = {}
    missing: dict[FieldPath, SpecIssue] = {}
    for error in exc.errors():
        clean, union_at, owner = resolve_loc(root, error["loc"])
        if union_at is not None:
            unions.setdefault(union_at, []).append((clean, error["msg"]))
            continue
        issue = _issue(error, clean, owner, file, locator, prefix, style)
        if error["type"] == "missing":
            missing[clean] = issue
        else:
            issues.append(issue)
        if error["type"] == "extra_forbidden" and "did you mean '" in issue.message:
            meant = issue.message.split("'")[1]  # the misspelt key explains the missing one
            missing[(*clean[:-1], meant)] = issue
    issues.extend(i for i in missing.values() if i not in issues)
    for union_at, errors in unions.items():
        deeper = [(c, m) for c, m in errors if len(c) > len(union_at)]
        if deeper:
            for clean, msg in deeper:
                line, col = locator.find(clean)
                issues.append(SpecIssue(file, line, col, _field(prefix, clean), msg))
            continue
        kinds = " or ".join(dict.fromkeys(_strip(m) for _, m in errors))
        hint = _UNION_HINTS.get(str(union_at[-1]) if union_at else "", f"expected {kinds}")
        line, col = locator.find(union_at)
        issues.append(SpecIssue(file, line, col, _field(prefix, union_at), hint))
    return issues


def _field(prefix: str, path: FieldPath) -> str:
    text = format_field(path)
    if not prefix:
        return text
    return f"{prefix}.{text}" if text and not text.startswith("[") else f"{prefix}{text}"


def _issue(
    error: Any,
    clean: FieldPath,
    owner: type[BaseModel] | None,
    file: str,
    locator: Locator,
    prefix: str,
    style: Style,
) -> SpecIssue:
    kind = error["type"]
    name = clean[-1] if clean else ""
    if kind == "missing":
        line, col = locator.find(clean[:-1])
        hint = f"add {name}: to it" if style == "yaml" else f"add {name}=..."
        message = f"required field is missing; {hint}"
    elif kind == "extra_forbidden":
        line, col = locator.find(clean, key=True)
        options = list(owner.model_fields) if owner is not None else []
        alias = _ALIASES.get(str(name))
        if alias in options:
            suggestion = f"; did you mean '{alias}'?"
        else:
            suggestion = did_you_mean(str(name), options)
        if suggestion:
            message = f"unknown field{suggestion}"
        elif options:
            message = "unknown field; valid fields are: " + ", ".join(options)
        else:
            message = "unknown field; remove it"
    else:
        line, col = locator.find(clean)
        message = error["msg"].removeprefix("Value error, ")
    return SpecIssue(file, line, col, _field(prefix, clean), message)
