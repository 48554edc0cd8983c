"""Did two runs grade against the same references? (``compare`` and ``insights`` warn.)

A field grade records the reference it graded against: the reference's call key (the
cache key of its call: provider, model, the messages sent, the schema asked for) and the
SHA-256 of the text graded against (the model's answer, or a person's override). Two runs
graded an input against **different references** when the call keys differ (the
reference was asked with another prompt version or model: ``prompt``) or the texts differ
(the reference model answered differently, or a person overrode it: ``answer``). A
difference between the runs on such an input may come from the reference alone, not from
the candidates.

A review is keyed by the call key, so a person's review (an override, a status) of run
A's reference does not apply to a reference asked differently in run B: such inputs are
counted as ``review_lost`` (A's grade recorded a reviewed status, B's ``unvalidated``).
Runs recorded before field grades kept the reference's hash are read by their reference
response's text (an override then goes unseen).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from qualspec.store import RunRecord

__all__ = ["ReferenceChange", "ReferenceChanges", "reference_changes"]

ChangeReason = Literal["prompt", "answer"]
_SHOWN = 5


def _inputs(n: int) -> str:
    return f"{n} input" if n == 1 else f"{n} inputs"


@dataclass(frozen=True, slots=True)
class ReferenceChange:
    """One input graded against different references in A and B."""

    input: str  # scenario, or scenario/input_id
    reason: ChangeReason  # prompt: asked differently; answer: answered or overridden differently
    review_lost: bool  # A's reference was reviewed, B's (asked differently) is not
    status_a: str | None
    status_b: str | None


@dataclass(frozen=True, slots=True)
class ReferenceChanges:
    """The inputs of two runs graded against different references."""

    changes: tuple[ReferenceChange, ...]
    compared: int  # inputs graded against a reference in both runs

    @property
    def inputs(self) -> list[str]:
        """The changed inputs."""
        return [c.input for c in self.changes]

    @property
    def review_lost(self) -> int:
        """Inputs whose reference review in A does not apply to B's reference."""
        return sum(1 for c in self.changes if c.review_lost)

    def warning(self) -> str | None:
        """One line for people, or None when every reference is the same."""
        if not self.changes:
            return None
        prompt = sum(1 for c in self.changes if c.reason == "prompt")
        answer = len(self.changes) - prompt
        why = []
        if prompt:
            why.append(f"{prompt} asked with a different prompt or model")
        if answer:
            why.append(f"{answer} answered or overridden differently")
        shown = ", ".join(self.inputs[:_SHOWN]) + (", ..." if len(self.changes) > _SHOWN else "")
        text = (
            f"reference changed for {_inputs(len(self.changes))} (of {self.compared} graded "
            f"in both runs; {', '.join(why)}): {shown}. Differences on these inputs may come "
            "from the reference, not the candidates."
        )
        if self.review_lost:
            text += (
                f" {self.review_lost} had a person's review that does not apply to the new "
                "reference (reviews are kept per prompt version): review them again "
                "(qualspec reference list)."
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"inputs", "compared", "review_lost", "changes": [...]}``."""
        return {
            "inputs": len(self.changes),
            "compared": self.compared,
            "review_lost": self.review_lost,
            "changes": [
                {
                    "input": c.input,
                    "reason": c.reason,
                    "review_lost": c.review_lost,
                    "status_a": c.status_a,
                    "status_b": c.status_b,
                }
                for c in self.changes
            ],
        }


@dataclass(frozen=True, slots=True)
class _Graded:
    call_key: str | None
    sha: str | None
    status: str | None


def _references(run: RunRecord) -> dict[str, _Graded]:
    """Input -> the reference its field grades were graded against (the first grade's)."""
    from qualspec.judges import is_field_grade

    responses = {r.key: r for r in run.responses}
    out: dict[str, _Graded] = {}
    for j in run.judgments:
        if not is_field_grade(j):
            continue
        response = responses.get(j.response_key)
        details: Mapping[str, Any] = j.details or {}
        if response is None:
            continue
        name = response.scenario
        if response.input_id is not None:
            name = f"{name}/{response.input_id}"
        if name in out:
            continue
        ref_key = details.get("reference_key")
        reference = responses.get(ref_key) if isinstance(ref_key, str) else None
        call_key = details.get("reference_call_key")
        if not isinstance(call_key, str):
            call_key = reference.call_key if reference is not None else None
        sha = details.get("reference_sha256")
        if not isinstance(sha, str) and reference is not None and reference.text is not None:
            sha = hashlib.sha256(reference.text.encode()).hexdigest()
        status = details.get("reference_status")
        out[name] = _Graded(
            call_key,
            sha if isinstance(sha, str) else None,
            status if isinstance(status, str) else None,
        )
    return out


def reference_changes(a: RunRecord, b: RunRecord) -> ReferenceChanges:
    """The inputs run ``a`` and run ``b`` graded against different references.

    Example:
        >>> changed = reference_changes(store.load_run(v1), store.load_run(v2))
        >>> changed.warning()
        'reference changed for 2 inputs (of 5 graded in both runs; ...'
    """
    refs_a, refs_b = _references(a), _references(b)
    changes: list[ReferenceChange] = []
    compared = 0
    for name, ga in refs_a.items():
        gb = refs_b.get(name)
        if gb is None:
            continue
        compared += 1
        reason: ChangeReason | None = None
        if ga.call_key is not None and gb.call_key is not None and ga.call_key != gb.call_key:
            reason = "prompt"
        elif ga.sha is not None and gb.sha is not None and ga.sha != gb.sha:
            reason = "answer"
        if reason is None:
            continue
        reviewed = ga.status not in (None, "unvalidated")
        lost = reason == "prompt" and reviewed and gb.status in (None, "unvalidated")
        changes.append(ReferenceChange(name, reason, lost, ga.status, gb.status))
    return ReferenceChanges(tuple(changes), compared)
