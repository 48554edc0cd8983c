"""What the fake server answers (see :mod:`qualspec.testing._fakeserver`): the judge's reply,
the response bodies of both APIs, and the errors."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "DEFAULT_JUDGE_REPLY",
    "JudgeReply",
    "LogprobsReply",
    "judge_text",
    "refused_format",
    "reply_payload",
]

DEFAULT_JUDGE_REPLY = '{"score": 8, "reasoning": "The answer meets the criterion."}'

JudgeReply = str | Callable[[dict[str, Any]], str]


def _error_body(status: int) -> bytes:
    messages = {
        401: "Incorrect API key provided.",
        403: "Forbidden.",
        429: "Rate limit reached; slow down.",
        400: "Invalid request: unsupported parameter.",
    }
    message = messages.get(status, "The server had an error while processing your request.")
    return json.dumps({"error": {"message": message, "type": f"fake_{status}"}}).encode()


def _last_user_text(messages: Any) -> str:
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):  # content blocks
                return " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _prompt_chars(body: dict[str, Any]) -> int:
    total = len(str(body.get("system", "")))
    for message in body.get("messages") or ():
        if isinstance(message, dict):
            total += len(str(message.get("content", "")))
    return total


def refused_format(response_formats: tuple[str, ...] | None, body: dict[str, Any]) -> str | None:
    """llama.cpp's server message for a response_format type it does not take."""
    fmt = body.get("response_format")
    if response_formats is None or not isinstance(fmt, dict):
        return None
    kind = fmt.get("type")
    if kind in response_formats:
        return None
    allowed = " or ".join(f"'{t}'" for t in ("text", *response_formats))
    return (
        "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n"
        f"  Input should be {allowed} [type=literal_error, input_value={kind!r}]"
    )


def judge_text(reply: JudgeReply, body: dict[str, Any]) -> str:
    """The judge's reply to ``body``: ``reply``, or its result for a callable; the default
    reply gives an all-criteria judge and a comparison a score per criterion or answer."""
    if callable(reply):
        return reply(body)
    if reply == DEFAULT_JUDGE_REPLY:  # an all-criteria judge gets a score per criterion
        text = _last_user_text(body.get("messages"))
        keys = re.findall(r'"(\d+)": <0-10>', text)
        if keys:
            scores = {k: 8 for k in keys}
            return json.dumps({"scores": scores, "reasoning": "Meets the criteria."})
        labels = re.findall(r'"([A-Z]\d*)": <0-10>', text)
        if labels:  # a comparison: the first answer shown wins (a positional judge)
            scores = {label: 8 if i == 0 else 6 for i, label in enumerate(labels)}
            return json.dumps(
                {"scores": scores, "winner": labels[0], "reasoning": "A is more complete."}
            )
    return reply


LogprobsReply = Callable[[dict[str, Any], str], Any]
"""The ``choices[0].logprobs`` of an answer, from its request body and text (None: none)."""


def reply_payload(
    body: dict[str, Any],
    text: str,
    *,
    anthropic: bool,
    structured: bool,
    logprobs: LogprobsReply | None = None,
) -> dict[str, Any]:
    """The response body carrying ``text``: an Anthropic message or an OpenAI completion
    (a structured Anthropic answer as a tool call). ``logprobs`` gives an OpenAI answer
    its ``logprobs`` when the request asked for them (``logprobs: true``)."""

    model = str(body.get("model", "fake"))
    prompt_tokens = max(_prompt_chars(body) // 4, 1)
    completion_tokens = max(len(text) // 4, 1)
    if anthropic:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if structured:
            try:
                content = [
                    {
                        "type": "tool_use",
                        "id": "toolu_fake",
                        "name": "respond",
                        "input": json.loads(text),
                    }
                ]
            except ValueError:
                pass
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
            "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens},
        }
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": "stop",
    }
    if logprobs is not None and body.get("logprobs"):
        choice["logprobs"] = logprobs(body, text)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
