"""Safe YAML reading that keeps where every value came from.

The document is *composed* (``yaml.compose`` with ``SafeLoader``: nodes only, no object is
ever constructed) and then turned into plain data by hand, so that each field path
(a tuple of keys and indices) maps to its 1-based line and column.

Composing uses libyaml (``CSafeLoader``, about 10x faster on a suite with many input rows)
when PyYAML was built with it; a document libyaml refuses is composed again by the pure
Python loader, whose error messages are the ones reported.

Before anything is composed, a pass over the parser's events (both parsers are iterative)
refuses what would explode or recurse later: nesting deeper than :data:`MAX_DEPTH`, an
alias inside the collection it names (a cycle), and aliases that would expand the document
by more than :data:`MAX_ALIAS_NODES` nodes ("billion laughs"). Such a document is one
issue, found in time linear in the text.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from qualspec.errors import SpecIssue
from qualspec.spec._paths import FieldPath, Positions, format_field

__all__ = ["MAX_ALIAS_NODES", "MAX_DEPTH", "parse_yaml"]

MAX_DEPTH = 100
"""The deepest nesting of lists and mappings accepted (a suite needs fewer than 10)."""
MAX_ALIAS_NODES = 100_000
"""How many nodes aliases may add to a document in all (each alias adds its anchor's size)."""

_TAG = "tag:yaml.org,2002:"
# Same resolver and the same nodes (tags, values, marks) as SafeLoader, composed in C.
_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", None)
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
        limit = _check_limits(text)
        if limit is not None:
            (line, col), message = limit
            return None, Positions(), [SpecIssue(file, line, col, "", message)]
        root = _compose(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.context and problem.startswith("but "):
            problem = f"{exc.context} {problem}"
        return None, Positions(), [SpecIssue(file, line, col, "", f"invalid YAML: {problem}")]
    except yaml.YAMLError as exc:  # pragma: no cover - reader errors carry no mark
        return None, Positions(), [SpecIssue(file, 1, 1, "", f"invalid YAML: {exc}")]
    except RecursionError:  # pragma: no cover - the limits above keep nesting shallow
        message = f"invalid YAML: nested too deeply (at most {MAX_DEPTH} levels)"
        return None, Positions(), [SpecIssue(file, 1, 1, "", message)]
    if root is None:
        return None, Positions(), []
    builder = _Builder(file)
    data = builder.build(root, ())
    return data, builder.positions, builder.issues


def _compose(text: str) -> Node | None:
    """Compose with libyaml when available; errors always come from the Python loader."""
    if _FAST_LOADER is not None:
        try:
            node: Node | None = yaml.compose(text, Loader=_FAST_LOADER)
        except yaml.YAMLError:
            pass  # composed again below, for the Python loader's message and position
        else:
            return node
    return yaml.compose(text, Loader=yaml.SafeLoader)


def _check_limits(text: str) -> tuple[tuple[int, int], str] | None:
    """Where and why ``text`` exceeds the nesting or alias limits (None when it does not).

    Syntax errors end the pass quietly: composing reports them.
    """
    loader: Any = _FAST_LOADER or yaml.SafeLoader
    # per open collection: [anchor or None, nodes so far]; anchor -> expanded node count
    stack: list[list[Any]] = []
    sizes: dict[str, int] = {}
    added = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            kind = type(event)
            anchor: str | None = getattr(event, "anchor", None)
            if kind is ScalarEvent:
                if stack:
                    stack[-1][1] += 1
                if anchor is not None:
                    sizes[anchor] = 1
            elif kind is SequenceStartEvent or kind is MappingStartEvent:
                if len(stack) >= MAX_DEPTH:
                    return _at(event), (
                        f"nested too deeply: more than {MAX_DEPTH} levels of lists and "
                        "mappings; flatten the document"
                    )
                stack.append([anchor, 1])
            elif kind is SequenceEndEvent or kind is MappingEndEvent:
                opened, size = stack.pop()
                if opened is not None:
                    sizes[opened] = size
                if stack:
                    stack[-1][1] += size
            elif kind is AliasEvent:
                if any(frame[0] == anchor for frame in stack):
                    return _at(event), (
                        f"recursive alias '*{anchor}' inside the collection it names; "
                        "an alias must refer to a finished value"
                    )
                size = sizes.get(anchor or "", 1)  # an undefined alias fails when composed
                added += size
                if added > MAX_ALIAS_NODES:
                    return _at(event), (
                        f"aliases expand the document beyond {MAX_ALIAS_NODES:,} values "
                        "(an alias bomb?); write the values out or use fewer aliases"
                    )
                if stack:
                    stack[-1][1] += size
            elif kind is DocumentEndEvent:
                sizes.clear()
                added = 0
    except yaml.YAMLError:
        return None
    return None


def _at(event: Event) -> tuple[int, int]:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
