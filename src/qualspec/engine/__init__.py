"""The engine: ``Session`` (the async core), plans, the call layer, evaluators, the recorder.

Everything other packages use from the engine is exported here; its modules are private.
Heavy pieces load on first use, so ``import qualspec.engine`` stays light.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from qualspec.lazy import lazy_exports

# A library logs; the application decides where to. Nothing is printed unless configured
# (the CLI's --verbose configures it). Every engine module logs under "qualspec.*".
logging.getLogger("qualspec").addHandler(logging.NullHandler())

if TYPE_CHECKING:
    from qualspec.engine._api import run
    from qualspec.engine._calls import CallEngine, CallStopped
    from qualspec.engine._decorator import (
        BaseEvaluator,
        DecoratedEvaluator,
        FunctionContext,
        FunctionEvaluator,
        evaluator,
    )
    from qualspec.engine._estimate import Estimate, GroupEstimate, ModelEstimate, estimate
    from qualspec.engine._evaluators import (
        EVALUATOR_ENTRY_POINT_GROUP,
        EvalContext,
        Evaluator,
        EvaluatorFactory,
        Scope,
        Subject,
        Verdict,
        available_evaluators,
        create_evaluator,
        evaluates,
        group_subject_key,
        uses_dependencies,
        with_defaults,
    )
    from qualspec.engine._execute import (
        BoundEvaluator,
        ExecuteOptions,
        ExecuteStats,
        Executor,
        ProgressFn,
    )
    from qualspec.engine._hooks import (
        CHARS_PER_TOKEN,
        DEFAULT_OUTPUT_TOKENS,
        JUDGE_OUTPUT_TOKENS,
        JUDGE_PROMPT_TOKENS,
        PER_MESSAGE_TOKENS,
        Calibrated,
        HookDefaults,
        PlannedCalls,
        PrepareContext,
        answer_tokens,
        judged_tokens,
        message_tokens,
    )
    from qualspec.engine._items import WorkItem, call_key, cell_key, reference_key
    from qualspec.engine._lazy import LazyItems
    from qualspec.engine._options import CallOptions
    from qualspec.engine._plan import Plan, check_plan, expand, parse_temperatures
    from qualspec.engine._recorder import Recorder
    from qualspec.engine._reply import Reply, Usage
    from qualspec.engine._retry import RetryPolicy
    from qualspec.engine._run import execute_plan
    from qualspec.engine._run_steps import FULL_RECORD_LIMIT
    from qualspec.engine._session import RunOutcome, Session, run_sync
    from qualspec.engine._sink import Sink, SinkFactory

_EXPORTS: dict[str, str] = {
    "BaseEvaluator": "_decorator",
    "BoundEvaluator": "_execute",
    "CallEngine": "_calls",
    "CallOptions": "_options",
    "CallStopped": "_calls",
    "DecoratedEvaluator": "_decorator",
    "EVALUATOR_ENTRY_POINT_GROUP": "_evaluators",
    "Estimate": "_estimate",
    "EvalContext": "_evaluators",
    "Evaluator": "_evaluators",
    "EvaluatorFactory": "_evaluators",
    "ExecuteOptions": "_options",
    "ExecuteStats": "_options",
    "Executor": "_execute",
    "FunctionContext": "_decorator",
    "FunctionEvaluator": "_decorator",
    "FULL_RECORD_LIMIT": "_run_steps",
    "GroupEstimate": "_estimate",
    "LazyItems": "_lazy",
    "ModelEstimate": "_estimate",
    "Plan": "_plan",
    "ProgressFn": "_options",
    "Recorder": "_recorder",
    "Reply": "_reply",
    "RetryPolicy": "_retry",
    "RunOutcome": "_session",
    "Scope": "_evaluators",
    "Session": "_session",
    "Sink": "_sink",
    "SinkFactory": "_sink",
    "Subject": "_evaluators",
    "Usage": "_reply",
    "Verdict": "_evaluators",
    "WorkItem": "_items",
    "available_evaluators": "_evaluators",
    "call_key": "_items",
    "cell_key": "_items",
    "check_plan": "_plan",
    "create_evaluator": "_evaluators",
    "estimate": "_estimate",
    "evaluates": "_evaluators",
    "evaluator": "_decorator",
    "execute_plan": "_run",
    "expand": "_plan",
    "group_subject_key": "_evaluators",
    "parse_temperatures": "_plan",
    "reference_key": "_items",
    "run": "_api",
    "run_sync": "_sync",
    "uses_dependencies": "_evaluators",
    "with_defaults": "_evaluators",
    "CHARS_PER_TOKEN": "_hooks",
    "DEFAULT_OUTPUT_TOKENS": "_hooks",
    "JUDGE_OUTPUT_TOKENS": "_hooks",
    "JUDGE_PROMPT_TOKENS": "_hooks",
    "PER_MESSAGE_TOKENS": "_hooks",
    "Calibrated": "_hooks",
    "HookDefaults": "_hooks",
    "PlannedCalls": "_hooks",
    "PrepareContext": "_hooks",
    "answer_tokens": "_hooks",
    "judged_tokens": "_hooks",
    "message_tokens": "_hooks",
}

__all__ = [
    "BaseEvaluator",
    "BoundEvaluator",
    "CallEngine",
    "CallOptions",
    "CallStopped",
    "DecoratedEvaluator",
    "EVALUATOR_ENTRY_POINT_GROUP",
    "Estimate",
    "EvalContext",
    "Evaluator",
    "EvaluatorFactory",
    "ExecuteOptions",
    "ExecuteStats",
    "Executor",
    "FULL_RECORD_LIMIT",
    "FunctionContext",
    "FunctionEvaluator",
    "GroupEstimate",
    "LazyItems",
    "ModelEstimate",
    "Plan",
    "ProgressFn",
    "Recorder",
    "Reply",
    "RetryPolicy",
    "RunOutcome",
    "Scope",
    "Session",
    "Sink",
    "SinkFactory",
    "Subject",
    "Usage",
    "Verdict",
    "WorkItem",
    "available_evaluators",
    "call_key",
    "cell_key",
    "check_plan",
    "create_evaluator",
    "estimate",
    "evaluates",
    "evaluator",
    "execute_plan",
    "expand",
    "group_subject_key",
    "parse_temperatures",
    "reference_key",
    "run",
    "run_sync",
    "uses_dependencies",
    "with_defaults",
    "CHARS_PER_TOKEN",
    "DEFAULT_OUTPUT_TOKENS",
    "JUDGE_OUTPUT_TOKENS",
    "JUDGE_PROMPT_TOKENS",
    "PER_MESSAGE_TOKENS",
    "Calibrated",
    "HookDefaults",
    "PlannedCalls",
    "PrepareContext",
    "answer_tokens",
    "judged_tokens",
    "message_tokens",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
