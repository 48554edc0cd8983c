"""The Python front end: run a ``.py`` suite file and take the ``Evaluation`` it defines."""

from __future__ import annotations

import ast
import builtins
import sys
import traceback
import types
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from qualspec.errors import SpecIssue
from qualspec.messages import closest
from qualspec.spec import _models
from qualspec.spec._issues import Locator, did_you_mean, validation_issues
from qualspec.spec._models import Evaluation
from qualspec.spec._paths import FieldPath, FixedLocator

__all__ = ["AstLocator", "load_python"]

_MODELS: dict[str, type[BaseModel]] = {
    name: obj
    for name in _models.__all__
    if isinstance(obj := getattr(_models, name), type) and issubclass(obj, BaseModel)
}


_PUBLIC = [
    "AtTemperature",
    "Candidate",
    "Comparison",
    "Evaluation",
    "ExpectCheck",
    "JudgeConfig",
    "ProviderConfig",
    "Role",
    "Rubric",
    "Scenario",
]


class AstLocator:
    """Finds field paths in the Python source of a model call, following literals and names.

    ``scenarios[2].rubric`` from ``Evaluation(scenarios=[..., ..., Scenario(rubric=...)])``
    is the ``rubric=`` value; a module-level name (``scenarios=SCENARIOS``) is followed to
    its assignment. Where the source is not a literal, the nearest enclosing node is used.
    """

    def __init__(self, tree: ast.Module, start: ast.AST | None) -> None:
        self.start = start
        self.names: dict[str, ast.expr] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        self.names[target.id] = stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if stmt.value is not None:
                    self.names[stmt.target.id] = stmt.value

    def find(self, path: FieldPath, *, key: bool = False) -> tuple[int, int]:
        """Where ``path`` starts (the keyword when ``key``), else its nearest known ancestor."""
        if self.start is None:
            return 1, 1
        node: ast.AST = self.start
        best: ast.AST = node
        for index, seg in enumerate(path):
            node = self._deref(node)
            found = self._child(node, seg)
            if found is None:
                break
            node, key_node = found
            best = key_node if key and index == len(path) - 1 and key_node else node
        return getattr(best, "lineno", 1), getattr(best, "col_offset", 0) + 1

    def _deref(self, node: ast.AST) -> ast.AST:
        for _ in range(10):
            if not (isinstance(node, ast.Name) and node.id in self.names):
                break
            node = self.names[node.id]
        return node

    @staticmethod
    def _child(node: ast.AST, seg: str | int) -> tuple[ast.AST, ast.AST | None] | None:
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == seg:
                    return keyword.value, keyword
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                if isinstance(k, ast.Constant) and k.value == seg:
                    return v, k
        elif isinstance(node, ast.List | ast.Tuple) and isinstance(seg, int):
            if 0 <= seg < len(node.elts) and not any(
                isinstance(e, ast.Starred) for e in node.elts[: seg + 1]
            ):
                return node.elts[seg], None
        return None


def _call_at(tree: ast.Module, frame: traceback.FrameSummary) -> ast.AST | None:
    """The call expression the frame was executing (3.11 positions), else the statement."""
    best: ast.AST | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or node.lineno != frame.lineno:
            continue
        if node.col_offset == frame.colno and node.end_col_offset == frame.end_colno:
            return node
        if best is None:
            best = node
    return best


def _frame_in(exc: BaseException, filename: str) -> traceback.FrameSummary | None:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    return frames[-1] if frames else None


def _exception_issue(
    exc: BaseException, frame: traceback.FrameSummary | None, shown: str, namespace: dict[str, Any]
) -> SpecIssue:
    line = (frame.lineno if frame else None) or 1
    col = (frame.colno + 1) if frame and frame.colno is not None else 1
    text = " ".join(str(exc).split())
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if isinstance(exc, NameError) and exc.name:
        hint = did_you_mean(exc.name, [*namespace, *dir(builtins)])
        if not hint:
            close = closest(exc.name, _PUBLIC, cutoff=0.8)
            hint = f"; import it: from qualspec.spec import {close}" if close else ""
        message += hint
    return SpecIssue(shown, line, col, "", message)


def _validation_error_issues(
    exc: ValidationError, frame: traceback.FrameSummary | None, tree: ast.Module, shown: str
) -> list[SpecIssue]:
    start = _call_at(tree, frame) if frame else None
    locator: Locator = AstLocator(tree, start)
    if start is None:
        line = (frame.lineno if frame else None) or 1
        col = (frame.colno + 1) if frame and frame.colno is not None else 1
        locator = FixedLocator(line, col)
    return validation_issues(
        exc,
        file=shown,
        locator=locator,
        root=_MODELS.get(exc.title),
        prefix="" if exc.title == "Evaluation" else exc.title,
        style="python",
    )


def _run_module(path: Path, shown: str, tree: ast.Module) -> tuple[dict[str, Any], list[SpecIssue]]:
    filename = str(path)
    code = compile(tree, filename, "exec")
    module = types.ModuleType(f"_qualspec_suite_{abs(hash(filename)):x}")
    module.__file__ = filename
    namespace = module.__dict__
    sys.modules[module.__name__] = module
    sys.path.insert(0, str(path.parent))
    try:
        exec(code, namespace)  # noqa: S102 - running the user's suite is the Python front end
    except ValidationError as exc:
        return namespace, _validation_error_issues(exc, _frame_in(exc, filename), tree, shown)
    except (Exception, SystemExit) as exc:
        return namespace, [_exception_issue(exc, _frame_in(exc, filename), shown, namespace)]
    finally:
        sys.modules.pop(module.__name__, None)
        if sys.path and sys.path[0] == str(path.parent):
            del sys.path[0]
    return namespace, []


def _assignment(tree: ast.Module, name: str) -> ast.AST | None:
    found: ast.AST | None = None
    for stmt in tree.body:
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, ast.AnnAssign):
            targets = [stmt.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            value = getattr(stmt, "value", None)
            found = value if isinstance(value, ast.Call) else stmt
    return found


def load_python(
    source: str, path: Path, shown: str
) -> tuple[Evaluation | None, AstLocator | None, list[SpecIssue]]:
    """Run a Python suite and pick its Evaluation.

    Args:
        source: The file's text.
        path: The file's resolved path (used for tracebacks and relative imports).
        shown: The path printed in issues.

    Returns:
        The Evaluation (or ``None``), a locator for its fields (pointing into the call that
        built it), and the issues found.
    """
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        line, col = exc.lineno or 1, exc.offset or 1
        return None, None, [SpecIssue(shown, line, col, "", f"SyntaxError: {exc.msg}")]
    namespace, issues = _run_module(path, shown, tree)
    if issues:
        return None, None, issues
    found: dict[int, list[str]] = {}
    objects: dict[int, Evaluation] = {}
    for name, value in namespace.items():
        if isinstance(value, Evaluation) and not name.startswith("__"):
            found.setdefault(id(value), []).append(name)
            objects[id(value)] = value
    if not found:
        message = "no Evaluation defined at module level; assign one: evaluation = Evaluation(...)"
        return None, None, [SpecIssue(shown, 1, 1, "", message)]
    if len(found) == 1:
        (key, names), *_ = found.items()
    else:
        chosen = namespace.get("evaluation")
        if not isinstance(chosen, Evaluation):
            listed = ", ".join(sorted(n for names in found.values() for n in names))
            message = f"several Evaluation objects ({listed}); name the one to run 'evaluation'"
            return None, None, [SpecIssue(shown, 1, 1, "", message)]
        key, names = id(chosen), ["evaluation"]
    name = "evaluation" if "evaluation" in names else names[0]
    return objects[key], AstLocator(tree, _assignment(tree, name)), []
