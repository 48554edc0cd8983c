"""Rubric mining through a ``qualspec.Session``: extract, summarize, judge.

Every model call is ``Session.complete`` (limits, retries, cache, cost, budget, recorded
in the session's run as responses of kind ``rubric_extract``, ``rubric_summarize`` or
``rubric_judge``): a second run with the same inputs is answered from the cache. An
answer that cannot be read is asked again (``attempt`` 1, 2... are new calls, cached
each); what is still unreadable after the retries stays *unscored* (or without rubrics),
with the reason, and never gets a made-up value.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.judges import Read, ask_until_read
from qualspec.prompts import load_template, render_template
from qualspec.rubrics._format import fit_to_context, format_session
from qualspec.rubrics._metrics import session_metrics
from qualspec.rubrics._parse import parse_extraction, parse_rubric_score, parse_summary
from qualspec.rubrics._sessions import ChatSession
from qualspec.store import redact_text

if TYPE_CHECKING:
    from qualspec.engine import Reply, Session

__all__ = [
    "EXTRACTOR_PROMPTS",
    "RESULTS_VERSION",
    "RUBRIC_RESULT_KEY",
    "RUBRIC_RUN_KIND",
    "MiningOptions",
    "extract_rubrics",
    "extractor_prompt_name",
    "judge_sessions",
    "session_rank",
    "summarize_rubrics",
    "weighted_score",
]

RESULTS_VERSION = 1
RUBRIC_RUN_KIND = "rubric_judgments"
RUBRIC_RUN_SUITE = "(rubrics judge)"
RUBRIC_RESULT_KEY = "rubric_judgments"
"""``judge_sessions`` records its calls in a run of its own (metadata ``kind``:
``rubric_judgments``) and, when done, its result under metadata ``rubric_judgments``."""
EXTRACTOR_PROMPTS = {
    "default": "rubric_extractor",
    "excellence": "rubric_extractor_excellence",
    "token_efficiency": "rubric_extractor_token_efficiency",
    "user_turn_efficiency": "rubric_extractor_user_turn_efficiency",
}
SUMMARIZER_PROMPT = "rubric_summarizer"
JUDGE_PROMPT = "rubric_judge"
_PROMPT_OVERHEAD_TOKENS = 700  # a template and a rubric, in tokens (generous)
_CHARS_PER_TOKEN = 3  # code and logs tokenize densely: a cautious estimate
_REMOTE_MAX_CHARS = 400_000


def extractor_prompt_name(score_name: str) -> str:
    """The extractor template for a score name: its own variant, or the default one.

    ``excellence``, ``token_efficiency`` and ``user_turn_efficiency`` (and names that
    contain them, such as ``task_excellence``) have their own; anything else is ``default``.
    """
    if score_name in EXTRACTOR_PROMPTS:
        return EXTRACTOR_PROMPTS[score_name]
    for key in ("user_turn_efficiency", "token_efficiency", "excellence"):
        if key in score_name:
            return EXTRACTOR_PROMPTS[key]
    return EXTRACTOR_PROMPTS["default"]


@dataclass(frozen=True, kw_only=True)
class MiningOptions:
    """How the pipeline calls its model.

    Example::

        MiningOptions(model="openai/gpt-4o-mini", retries=2, max_session_chars=200_000)

    Args:
        model: The ``provider/model`` that extracts, summarizes and judges.
        retries: How often an unreadable answer is asked again (0: never).
        max_session_chars: Sessions longer than this (formatted) are cut with a visible
            marker; default: what fits the model's context (``local/`` models: their
            ``QUALSPEC_LOCAL_N_CTX`` tokens, default 2048), else 400,000.
        max_tokens: The answer's token limit; default 1500 to extract and summarize and
            300 to judge (500 and 200 on ``local/`` models).
        temperature: Sent with every call.
    """

    model: str
    retries: int = 2
    max_session_chars: int | None = None
    max_tokens: int | None = None
    temperature: float | None = 0.0

    @property
    def local(self) -> bool:
        """Whether the model is an embedded one (a small context)."""
        return self.model.startswith("local/")

    def tokens_for(self, step: str) -> int:
        """The answer's token limit for ``step`` (extract, summarize or judge)."""
        if self.max_tokens is not None:
            return self.max_tokens
        if step == "judge":
            return 200 if self.local else 300
        return 500 if self.local else 1500

    def chars_for(self, step: str) -> int:
        """How many characters of a session (or of rubrics) fit a prompt of ``step``."""
        if self.max_session_chars is not None:
            return self.max_session_chars
        if not self.local:
            return _REMOTE_MAX_CHARS
        try:
            n_ctx = int(os.environ.get("QUALSPEC_LOCAL_N_CTX", "2048"))
        except ValueError:
            n_ctx = 2048
        room = n_ctx - self.tokens_for(step) - _PROMPT_OVERHEAD_TOKENS
        return max(room * _CHARS_PER_TOKEN, 600)


Progress = Callable[[str], None]


async def _prompt_version(session: Session, name: str, text: str) -> dict[str, Any]:
    version_id = await asyncio.to_thread(session.store.prompt_version, name, text)
    return {"name": name, "version_id": version_id}


async def _ask(
    session: Session,
    options: MiningOptions,
    prompt: str,
    kind: str,
    step: str,
    read: Callable[[str | None], tuple[bool, Any]],
) -> tuple[Any, Reply, int]:
    """Call until ``read`` accepts the answer or the retries are spent (a failed call is
    asked again too; the same prompt each time).

    Returns what ``read`` made of the last answer (None when the last call failed), the
    last reply and the attempts made.
    """

    async def ask(attempt: int, note: str | None) -> Reply:
        return await session.complete(
            options.model,
            prompt,
            kind=kind,
            temperature=options.temperature,
            max_tokens=options.tokens_for(step),
            attempt=attempt,
        )

    def read_reply(reply: Reply) -> Read[Any]:
        ok, value = read(reply.text) if reply.text is not None else (False, None)
        return Read(value, ok)

    asked = await ask_until_read(ask, read_reply, retries=options.retries, retry_errors=True)
    return (asked.value if asked.error is None else None), asked.replies[-1], asked.calls


def _session_entry(chat: ChatSession) -> dict[str, Any]:
    return {
        "session_id": chat.session_id,
        "path": None if chat.path is None else str(chat.path),
        "metrics": session_metrics(chat).as_dict(),
    }


async def extract_rubrics(
    session: Session,
    chats: Sequence[ChatSession],
    options: MiningOptions,
    *,
    score_name: str = "default",
    min_rubrics: int = 3,
    max_rubrics: int = 7,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Extract rubrics from each session; the JSON-ready result (``extracted.json``).

    Each session's entry holds its metrics, its rubrics (ids ``<session>_001``...), the
    attempts made, and ``error`` when no valid rubric could be read (with the problems).
    """
    name = extractor_prompt_name(score_name)
    template = load_template(name)
    prompt_ref = await _prompt_version(session, name, template)

    async def one(chat: ChatSession) -> dict[str, Any]:
        full = format_session(chat)
        text = fit_to_context(full, options.chars_for("extract"))
        prompt = render_template(
            template,
            {
                "chat_session": text,
                "extraction_min_rubrics": str(min_rubrics),
                "extraction_max_rubrics": str(max_rubrics),
            },
        )
        prefix = chat.session_id.replace("-", "")[:8] or "session"

        def read(answer: str | None) -> tuple[bool, Any]:
            parsed = parse_extraction(answer, prefix)
            return bool(parsed.rubrics), parsed

        parsed, reply, attempts = await _ask(
            session, options, prompt, "rubric_extract", "extract", read
        )
        entry = _session_entry(chat) | {"attempts": attempts, "cut": text != full}
        entry["rubrics"] = [] if parsed is None else parsed.rubrics
        entry["problems"] = [] if parsed is None else parsed.problems
        count = len(entry["rubrics"])
        if count and not min_rubrics <= count <= max_rubrics:
            entry["problems"].append(f"{count} rubrics, not {min_rubrics}-{max_rubrics} as asked")
        entry["error"] = reply.error or (None if entry["rubrics"] else "no valid rubric read")
        if progress is not None:
            progress(f"{chat.session_id}: {len(entry['rubrics'])} rubric(s)")
        return entry

    sessions = await asyncio.gather(*(one(c) for c in chats))
    return {
        "version": RESULTS_VERSION,
        "kind": "rubric_extraction",
        "model": options.model,
        "score_name": score_name,
        "prompt": prompt_ref,
        "sessions": list(sessions),
        "rubrics": [r | {"session_id": s["session_id"]} for s in sessions for r in s["rubrics"]],
    }


async def summarize_rubrics(
    session: Session, extracted: Sequence[dict[str, Any]], options: MiningOptions
) -> dict[str, Any]:
    """Consolidate extracted rubrics into the final 5-10 (``rubrics.json``).

    ``error`` is set (and ``rubrics`` empty) when no valid rubric could be read after
    the retries.
    """
    template = load_template(SUMMARIZER_PROMPT)
    prompt_ref = await _prompt_version(session, SUMMARIZER_PROMPT, template)
    shown = [
        {k: r[k] for k in ("name", "description", "scoring_criteria", "evidence") if k in r}
        for r in extracted
    ]
    all_rubrics = fit_to_context(
        redact_text(json.dumps(shown, indent=2, ensure_ascii=False)),
        options.chars_for("summarize"),
    )
    prompt = render_template(template, {"all_rubrics": all_rubrics})

    def read(answer: str | None) -> tuple[bool, Any]:
        parsed = parse_summary(answer)
        return bool(parsed.rubrics), parsed

    parsed, reply, attempts = await _ask(
        session, options, prompt, "rubric_summarize", "summarize", read
    )
    rubrics = [] if parsed is None else parsed.rubrics
    return {
        "version": RESULTS_VERSION,
        "kind": "rubrics",
        "model": options.model,
        "prompt": prompt_ref,
        "rubrics": rubrics,
        "consolidation_notes": "" if parsed is None else parsed.consolidation_notes,
        "problems": [] if parsed is None else parsed.problems,
        "attempts": attempts,
        "error": reply.error or (None if rubrics else "no valid rubric read"),
        "n_extracted": len(extracted),
    }


def weighted_score(scores: Sequence[dict[str, Any]], rubrics: Sequence[dict[str, Any]]) -> Any:
    """The weight-averaged 1-5 score of the scored rubrics, or None when none is scored."""
    weights = {r["id"]: float(r.get("weight", 1.0)) for r in rubrics}
    scored = [(weights.get(s["rubric_id"], 1.0), s["score"]) for s in scores if s["score"]]
    total = sum(w for w, _ in scored)
    if not scored or total <= 0:
        return None
    return round(sum(w * s for w, s in scored) / total, 3)


def session_rank(n_scored: int, n_rubrics: int, weighted: float | None) -> tuple[int, float]:
    """The sort key that ranks judged sessions: those every rubric scored first, best
    weighted score first; then those only some rubrics scored (their weighted score covers
    fewer rubrics, so it is not comparable); then the unscored.

    Example: ``sorted(sessions, key=lambda s: session_rank(s["n_scored"], 3,
    s["weighted_score"]))``.
    """
    coverage = 0 if n_scored >= n_rubrics > 0 else 1 if n_scored > 0 else 2
    return coverage, -(weighted if weighted is not None else 0.0)


async def judge_sessions(
    session: Session,
    chats: Sequence[ChatSession],
    rubrics: Sequence[dict[str, Any]],
    options: MiningOptions,
    *,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Score every session on every rubric (1-5); the JSON-ready result.

    A score is what the judge wrote (``SCORE: n``, range-checked), asked again up to
    ``options.retries`` times when unreadable, else ``None`` with ``unscored_reason``.
    A session's ``weighted_score`` averages its scored rubrics by weight. The calls are
    recorded in a run of their own (``RUBRIC_RUN_KIND``) whose metadata holds the result
    under ``RUBRIC_RESULT_KEY`` (what the web app's rubric scores page reads).
    """
    template = load_template(JUDGE_PROMPT)
    prompt_ref = await _prompt_version(session, JUDGE_PROMPT, template)

    async def score(text: str, rubric: dict[str, Any]) -> dict[str, Any]:
        prompt = render_template(
            template,
            {
                "rubric_name": rubric["name"],
                "rubric_description": rubric["description"],
                "scoring_criteria": rubric["scoring_criteria"],
                "chat_session": text,
            },
        )

        def read(answer: str | None) -> tuple[bool, Any]:
            parsed = parse_rubric_score(answer)
            return parsed.score is not None, parsed

        parsed, reply, attempts = await _ask(
            session, options, prompt, "rubric_judge", "judge", read
        )
        reason = reply.error if parsed is None else parsed.unscored_reason
        return {
            "rubric_id": rubric["id"],
            "name": rubric["name"],
            "score": None if parsed is None else parsed.score,
            "reasoning": None if parsed is None else parsed.reasoning,
            "unscored_reason": reason,
            "attempts": attempts,
        }

    async def one(chat: ChatSession) -> dict[str, Any]:
        full = format_session(chat)
        text = fit_to_context(full, options.chars_for("judge"))
        scores = list(await asyncio.gather(*(score(text, r) for r in rubrics)))
        entry = _session_entry(chat) | {"cut": text != full}
        entry["scores"] = scores
        entry["n_scored"] = sum(1 for s in scores if s["score"] is not None)
        entry["weighted_score"] = weighted_score(scores, rubrics)
        if progress is not None:
            progress(f"{chat.session_id}: {entry['n_scored']} of {len(scores)} scored")
        return entry

    meta = {"kind": RUBRIC_RUN_KIND, "model": options.model}
    async with session.recording(RUBRIC_RUN_SUITE, meta) as run_id:
        sessions = await asyncio.gather(*(one(c) for c in chats))
        result = {
            "version": RESULTS_VERSION,
            "kind": "rubric_judgments",
            "model": options.model,
            "prompt": prompt_ref,
            "rubrics": list(rubrics),
            "sessions": list(sessions),
        }
        # the scores, where the web app (and anyone with the store) reads them back
        patch = {RUBRIC_RESULT_KEY: result}
        await asyncio.to_thread(session.store.update_run_metadata, run_id, patch)
    return result
