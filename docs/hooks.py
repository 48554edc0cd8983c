"""MkDocs hooks: the reference pages generated from the code, so they cannot drift.

A page asks for generated content with a marker comment on a line of its own:

* ``<!-- generated: cli -->``: every command, subcommand and flag, from the argparse parsers
  (``qualspec.cli.build_parser``);
* ``<!-- generated: suite-schema -->``: the suite file format, from the JSON Schema that
  ``qualspec schema`` prints (``qualspec.spec.json_schema``);
* ``<!-- generated: python-api -->``: one mkdocstrings block per public name of ``qualspec``
  (its ``__all__``);
* ``<!-- include: PATH -->``: a file of the repository (the changelog), as it is.

``tests/test_docs.py`` imports this file to compare the CLI reference with ``--help``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- (generated|include): (\S+) -->$", re.M)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace each marker with what it names."""
    return MARKER.sub(lambda m: _expand(m.group(1), m.group(2)), markdown)


def _expand(kind: str, name: str) -> str:
    if kind == "include":
        text = (ROOT / name).read_text()
        # the included file's own title is the page's
        return re.sub(r"\A# .*\n", "", text)
    generators = {
        "cli": cli_reference,
        "suite-schema": suite_reference,
        "python-api": api_reference,
    }
    return generators[name]()


# --- the CLI ---------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each subcommand, in --help's order."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                if sub.prog.split()[-1] == name:  # aliases point at the same parser
                    found.append((name, helps.get(name, ""), sub))
    return found


def _option_rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            names = ", ".join(f"`{o}`" for o in action.option_strings)
            if action.nargs != 0:
                metavar = action.metavar or action.dest.upper()
                names += f" `{metavar if isinstance(metavar, str) else ' '.join(metavar)}`"
        else:
            names = f"`{action.metavar or action.dest}`"
        text = (action.help or "").replace("%(default)s", str(action.default))
        text = text.replace("%%", "%").replace("|", "\\|").replace("\n", " ")
        default = action.default
        hidden = default in (None, argparse.SUPPRESS, []) or action.nargs == 0
        shown = "" if hidden else f"`{default}`"
        rows.append(f"| {names} | {text} | {shown} |")
    return rows


def _command_section(
    path: list[str], summary: str, parser: argparse.ArgumentParser, out: list[str]
) -> None:
    level = "#" * min(len(path) + 1, 4)
    out.append(f"{level} `{' '.join(path)}`\n")
    text = parser.description or summary
    if text:
        out.append(text.strip() + "\n")
    out.append("```text\n" + parser.format_usage().strip() + "\n```\n")
    rows = _option_rows(parser)
    if rows:
        out.append("| argument | meaning | default |\n| --- | --- | --- |")
        out.extend(rows)
        out.append("")
    for name, help_text, sub in _subcommands(parser):
        _command_section([*path, name], help_text, sub, out)


def cli_reference() -> str:
    """Markdown for every command of ``qualspec``, from its parsers."""
    from qualspec.cli import build_parser

    parser = build_parser()
    out: list[str] = []
    _command_section(["qualspec"], "", parser, out)
    return "\n".join(out)


# --- the suite format ------------------------------------------------------------------


def _type_of(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in schema:
        return " or ".join(_type_of(s) for s in schema["anyOf"])
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_type_of(schema.get('items', {}))}"
    if kind == "object" and "additionalProperties" in schema:
        extra = schema["additionalProperties"]
        if isinstance(extra, dict):
            return f"mapping to {_type_of(extra)}"
    return str(kind)


def _properties_table(schema: dict[str, Any]) -> list[str]:
    required = set(schema.get("required", []))
    rows = ["| field | type | required | default | meaning |", "| --- | --- | --- | --- | --- |"]
    for name, prop in schema.get("properties", {}).items():
        default = f"`{json.dumps(prop['default'])}`" if "default" in prop else ""
        text = (prop.get("description") or "").replace("|", "\\|").replace("\n", " ")
        need = "yes" if name in required else ""
        rows.append(f"| `{name}` | {_type_of(prop)} | {need} | {default} | {text} |")
    return rows


def suite_reference() -> str:
    """Markdown tables for the suite file, from ``qualspec.spec.json_schema()``."""
    from qualspec.spec import json_schema

    schema = json_schema()
    out = ["## The suite (top level)\n"]
    if schema.get("description"):
        out.append(schema["description"].strip() + "\n")
    out.extend(_properties_table(schema))
    for name, definition in sorted(schema.get("$defs", {}).items()):
        out.append(f"\n## {name}\n")
        if definition.get("description"):
            out.append(definition["description"].strip() + "\n")
        if "properties" in definition:
            out.extend(_properties_table(definition))
        else:
            out.append(f"Type: {_type_of(definition)}")
    return "\n".join(out) + "\n"


# --- the Python API --------------------------------------------------------------------


def api_reference() -> str:
    """One mkdocstrings block per name in ``qualspec.__all__``, at the module defining it."""
    qualspec = importlib.import_module("qualspec")
    out = []
    for name in qualspec.__all__:
        if name.startswith("__"):
            continue
        value = getattr(qualspec, name)
        module = getattr(value, "__module__", "qualspec")
        out.append(
            f"## `qualspec.{name}`\n\n::: {module}.{name}\n    options:\n"
            "      show_root_heading: false\n      show_root_toc_entry: false\n"
        )
    return "\n".join(out)
