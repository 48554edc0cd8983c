"""Work items: one model call each, with a stable content key."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from qualspec.providers import Message

__all__ = ["CallKeys", "WorkItem", "call_key", "cell_key", "messages_json", "reference_key"]


def call_key(
    provider: str,
    model: str,
    messages: tuple[Message, ...],
    params: Mapping[str, Any],
    run_index: int,
    json_schema: Mapping[str, Any] | None = None,
) -> str:
    """Hash of everything that makes a call: the cache, resume and diff key."""
    return CallKeys(provider, model, params, run_index, json_schema).key(messages_json(messages))


# what json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False) makes
_dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
_string = json.encoder.encode_basestring  # how that encoder writes a str (ensure_ascii off)


def messages_json(messages: tuple[Message, ...]) -> str:
    """The messages as :func:`call_key` hashes them (made once per row, shared by every
    temperature and run of a cell): ``[[role, content], ...]`` as that JSON."""
    if all(type(m.role) is str and type(m.content) is str for m in messages):
        return "[" + ",".join(f"[{_string(m.role)},{_string(m.content)}]" for m in messages) + "]"
    return _dumps([[m.role, m.content] for m in messages])


class CallKeys:
    """:func:`call_key` of calls that differ only in their messages: the JSON around the
    messages is made once. The text hashed is exactly what ``json.dumps`` makes of the
    whole payload with sorted keys (``js``, ``m``, ``msg``, ``p``, ``par``, ``run``), so
    every key is the same string as ever (an existing store's cache still hits)."""

    __slots__ = ("_head", "_tail")

    def __init__(
        self,
        provider: str,
        model: str,
        params: Mapping[str, Any],
        run_index: int,
        json_schema: Mapping[str, Any] | None = None,
    ) -> None:
        self._head = f'{{"js":{_dumps(json_schema)},"m":{_dumps(model)},"msg":'
        self._tail = f',"p":{_dumps(provider)},"par":{_dumps(params)},"run":{_dumps(run_index)}}}'

    def key(self, messages: str) -> str:
        """The call key of the messages as :func:`messages_json` wrote them."""
        text = self._head + messages + self._tail
        return hashlib.sha256(text.encode()).hexdigest()[:32]


def cell_key(call: str, candidate: str, role: object, scenario: str, row: object) -> str:
    """The key of one cell of the matrix: its call plus the names that place it.

    Two candidates (or roles) configured identically make the same call, so they share
    ``call_key`` (and so the cache) but keep separate cells in a run.
    """
    role_name = getattr(role, "name", None)
    input_id = getattr(row, "id", None)
    text = "\x1f".join([call, candidate, role_name or "", scenario, input_id or ""])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def reference_key(call: str, scenario: str, input_id: str | None) -> str:
    """The key of a reference answer: its call (model, messages: the agent prompt version)
    placed under the scenario and input it answers."""
    text = "\x1f".join(["reference", call, scenario, input_id or ""])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class WorkItem:
    """One model call of a plan: a candidate cell of the matrix, or a call of another kind.

    ``key`` identifies the cell (resume, store, diff); ``call_key`` identifies the call
    (the cache): a hash of provider, model, messages, parameters and run index.

    ``temperature`` is the requested temperature (None: none is sent, the provider's
    default); the engine records the effective (clamped) one next to it. ``params``
    excludes temperature. ``criteria`` are the criteria that apply to this cell (scenario
    criteria, rubric criteria and the ``at_temperature`` criteria matching
    ``temperature``, never when it is None), in order, de-duplicated.

    ``kind`` is what the call is for (``candidate``; ``reference``, ...): every kind is
    answered the same way (limits, cache, cost, budget, retries) and stored as a response
    of its kind. ``depends_on`` holds the keys of other items of the same plan (a
    candidate's reference answer): an evaluation of this item waits for their answers
    and gets them in ``Subject.dependencies`` (see :meth:`Plan.with_references`).
    """

    key: str
    call_key: str
    candidate: str
    role: str | None
    scenario: str
    input_id: str | None
    temperature: float | None
    run_index: int
    provider: str
    model: str
    messages: tuple[Message, ...]
    params: Mapping[str, Any]
    criteria: tuple[str, ...]
    context: str | None = None
    # texts whose versions are recorded (name -> text), named by source, e.g.
    # {"system_prompt:role:expert": ..., "preamble:expert": ..., "scenario_prompt:988": ...}
    prompt_parts: Mapping[str, str] = field(default_factory=dict)
    # the input row's variables (rendered into the prompt), shown to the judge
    input_values: Mapping[str, Any] | None = None
    # the scenario's ``expect:`` checks as (name, value) pairs, run without a model call
    checks: tuple[tuple[str, Any], ...] = ()
    kind: str = "candidate"
    depends_on: tuple[str, ...] = ()
    # the scenario's ``output_schema`` as a JSON Schema: the answer is asked for as
    # structured output (negotiated down to JSON mode or instructions where refused)
    json_schema: Mapping[str, Any] | None = None
