"""Checks on what a person gives a reference review: who they are, and whether an
override fits the scenario's ``output_schema`` (the CLI and the web app use the same)."""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["USER_ENV", "reviewer", "schema_problem"]

USER_ENV = "QUALSPEC_USER"


def reviewer() -> str:
    """Who is reviewing: ``$QUALSPEC_USER``, else the OS user name."""
    name = os.environ.get(USER_ENV, "").strip()
    if name:
        return name
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no user name in the environment or the password file
        return "unknown"


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_problem(value: Any, schema: Any, where: str = "the answer") -> str | None:
    """The first way ``value`` breaks ``schema``, or None when it fits.

    ``schema`` is a scenario's ``output_schema``: a field list (``{"fields": [{"name":
    ...}, ...]}``: an object with every field) or a JSON Schema, of which ``type``,
    ``required``, ``properties``, ``items`` and ``enum`` are checked.
    """
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("fields"), list):
        if not isinstance(value, dict):
            return f"{where} must be a JSON object with the fields of the scenario"
        for entry in schema["fields"]:
            name = entry.get("name") if isinstance(entry, dict) else entry
            if isinstance(name, str) and name not in value:
                return f"field '{name}' is missing: add it (null when there is no value)"
            kind = entry.get("type") if isinstance(entry, dict) else None
            if isinstance(name, str) and isinstance(kind, str) and value[name] is not None:
                if not _is(value[name], kind):
                    return f"field '{name}' must be {kind} (or null), not {_json_type(value[name])}"
        return None
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    if kinds and not any(_is(value, k) for k in kinds):
        return f"{where} must be {' or '.join(map(str, kinds))}, not {_json_type(value)}"
    if "enum" in schema and isinstance(schema["enum"], list) and value not in schema["enum"]:
        return f"{where} must be one of {json.dumps(schema['enum'])}"
    if isinstance(value, dict):
        for name in schema.get("required") or ():
            if name not in value:
                return f"field '{name}' is missing: add it"
        for name, sub in (schema.get("properties") or {}).items():
            if name in value:
                problem = schema_problem(value[name], sub, f"field '{name}'")
                if problem is not None:
                    return problem
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problem = schema_problem(item, schema["items"], f"{where}[{i}]")
            if problem is not None:
                return problem
    return None


def _is(value: Any, kind: str) -> bool:
    types = _JSON_TYPES.get(kind)
    if types is None:
        return True  # a type this check does not know: not refused
    if kind in ("number", "integer") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, types)


def _json_type(value: Any) -> str:
    for name, types in _JSON_TYPES.items():
        if name != "integer" and isinstance(value, types) and not isinstance(value, bool):
            return name
    return "boolean" if isinstance(value, bool) else type(value).__name__
