"""Safe YAML reading that keeps where every value came from.

The document is *composed* (``yaml.compose`` with ``SafeLoader``: nodes only, no object is
ever constructed) and then turned into plain data by hand, so that each field path
(a tuple of keys and indices) maps to its 1-based line and column.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from qualspec.errors import SpecIssue
from qualspec.spec._paths import FieldPath, Positions, format_field

__all__ = ["parse_yaml"]

_TAG = "tag:yaml.org,2002:"
_SCALARS = {"str", "null", "bool", "int", "float", "timestamp"}


def _mark(node: Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _show_tag(tag: str) -> str:
    return "!!" + tag[len(_TAG) :] if tag.startswith(_TAG) else tag


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.positions = Positions()
        self.issues: list[SpecIssue] = []
        self._scalars = SafeConstructor()

    def issue(self, node: Node, path: FieldPath, message: str) -> None:
        line, col = _mark(node)
        self.issues.append(SpecIssue(self.file, line, col, format_field(path), message))

    def build(self, node: Node, path: FieldPath) -> Any:
        self.positions.values.setdefault(path, _mark(node))
        if isinstance(node, ScalarNode):
            return self.scalar(node, path)
        if isinstance(node, SequenceNode):
            if node.tag != _TAG + "seq":
                return self.unsupported(node, path)
            return [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
        if isinstance(node, MappingNode):
            if node.tag != _TAG + "map":
                return self.unsupported(node, path)
            return self.mapping(node, path)
        return self.unsupported(node, path)  # pragma: no cover - composer yields only these

    def unsupported(self, node: Node, path: FieldPath) -> None:
        self.issue(
            node,
            path,
            f"unsupported YAML tag '{_show_tag(node.tag)}': qualspec reads YAML safely and "
            "never constructs objects; remove the tag",
        )

    def scalar(self, node: ScalarNode, path: FieldPath) -> Any:
        tag = node.tag[len(_TAG) :] if node.tag.startswith(_TAG) else ""
        if tag not in _SCALARS:
            return self.unsupported(node, path)
        if tag in ("str", "timestamp"):
            return node.value  # dates stay text: prompts and names are strings
        return self._scalars.construct_object(node)

    def mapping(self, node: MappingNode, path: FieldPath) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        seen: dict[Any, int] = {}
        for key_node, value_node in self._pairs(node, path):
            if not isinstance(key_node, ScalarNode):
                self.issue(key_node, path, "mapping keys must be plain text")
                continue
            key = self.scalar(key_node, path)
            if isinstance(key, float | bool) or key is None:
                key = key_node.value
            child = (*path, key)
            if key in seen:
                self.issue(
                    key_node,
                    child,
                    f"duplicate key '{key}' (first at line {seen[key]}); keep only one",
                )
                continue
            seen[key] = key_node.start_mark.line + 1
            self.positions.keys[child] = _mark(key_node)
            out[key] = self.build(value_node, child)
        return out

    def _pairs(self, node: MappingNode, path: FieldPath) -> list[tuple[Node, Node]]:
        """Key/value node pairs with YAML merge keys (``<<: *anchor``) expanded in place."""
        pairs: list[tuple[Node, Node]] = []
        merged: list[tuple[Node, Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag != _TAG + "merge":
                pairs.append((key_node, value_node))
                continue
            sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            for source in sources:
                if isinstance(source, MappingNode) and source.tag == _TAG + "map":
                    merged.extend(self._pairs(source, path))
                else:
                    self.issue(source, path, "'<<' must merge a mapping (or a list of them)")
        explicit = {k.value for k, _ in pairs if isinstance(k, ScalarNode)}
        return [p for p in merged if p[0].value not in explicit] + pairs


def parse_yaml(text: str, file: str) -> tuple[Any, Positions, list[SpecIssue]]:
    """Read one YAML document safely.

    Args:
        text: The YAML source.
        file: The path to print in issues.

    Returns:
        The plain data (``None`` for an empty document), the positions of its values and
        the issues found (syntax errors, duplicate keys, unsupported tags).
    """
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.context and problem.startswith("but "):
            problem = f"{exc.context} {problem}"
        return None, Positions(), [SpecIssue(file, line, col, "", f"invalid YAML: {problem}")]
    except yaml.YAMLError as exc:  # pragma: no cover - reader errors carry no mark
        return None, Positions(), [SpecIssue(file, 1, 1, "", f"invalid YAML: {exc}")]
    if root is None:
        return None, Positions(), []
    builder = _Builder(file)
    data = builder.build(root, ())
    return data, builder.positions, builder.issues
