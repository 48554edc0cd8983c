"""Prompt templates stored as package files, rendered with ``{{ name }}`` placeholders."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

__all__ = ["load_template", "render_template"]

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_NAME = re.compile(r"[A-Za-z0-9_]+")


@lru_cache(maxsize=32)
def load_template(name: str) -> str:
    """Return the text of the packaged template ``qualspec/prompts/<name>.txt``.

    Args:
        name: The template name without the ``.txt`` suffix, e.g. ``"judge_criteria"``.

    Returns:
        The template text, exactly as stored (its content hash is its version).

    Raises:
        ValueError: If the name is not a plain identifier or no such template exists.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"bad template name {name!r}: use letters, digits and '_' only")
    resource = resources.files("qualspec.prompts").joinpath(f"{name}.txt")
    if not resource.is_file():
        raise ValueError(
            f"no prompt template named {name!r}: expected qualspec/prompts/{name}.txt "
            "(reinstall qualspec if the file is missing)"
        )
    return resource.read_text(encoding="utf-8")


def render_template(template: str, values: dict[str, str]) -> str:
    """Replace each ``{{ name }}`` placeholder with ``values[name]`` in a single pass.

    A single pass means text inserted for one placeholder (a model's answer, say) is never
    itself searched for placeholders. Placeholders without a value are left as they are.

    Args:
        template: The template text.
        values: Replacement text per placeholder name.

    Returns:
        The rendered text.

    Example:
        >>> render_template("Hi {{ who }}!", {"who": "there"})
        'Hi there!'
    """

    def _sub(match: re.Match[str]) -> str:
        key = match.group(1)
        return values[key] if key in values else match.group(0)

    return _PLACEHOLDER.sub(_sub, template)
