"""The one ask / read / ask-again loop (``ask_until_read``): what it calls, when it stops,
and what it hands back (every raw text, the calls, their cost, the last error)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from qualspec.engine import Reply, Usage
from qualspec.judges import AskResult, Read, ask_until_read, could_not_read

HOW = "Answer only with a number."


class Script:
    """Answers each call with the next reply; records (attempt, note) of every call."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[int, str | None]] = []

    async def __call__(self, attempt: int, note: str | None) -> Reply:
        self.calls.append((attempt, note))
        return self.replies.pop(0)


def answer(text: str | None, *, cost: float | None = 0.01, cached: bool = False) -> Reply:
    usage = Usage(input_tokens=10, output_tokens=2, cost_usd=cost, latency_s=0.5, cached=cached)
    return Reply(text=text, usage=usage)


def failed(error: str = "HTTP 503") -> Reply:
    return Reply(text=None, usage=Usage(error=error, cost_usd=0.0))


def read_number(reply: Reply) -> Read[int | None]:
    text = (reply.text or "").strip()
    if text.isdigit():
        return Read(int(text), True)
    return Read(None, False, f"not a number: {text!r}")


def ask(
    script: Script,
    *,
    retries: int,
    re_ask_note: str | Callable[[str | None], str] | None = None,
    retry_errors: bool = False,
) -> AskResult[int | None]:
    return asyncio.run(
        ask_until_read(
            script, read_number, retries=retries, re_ask_note=re_ask_note, retry_errors=retry_errors
        )
    )


def test_an_answer_read_the_first_time_is_one_call() -> None:
    script = Script(answer("7"))
    asked = ask(script, retries=2, re_ask_note=HOW)
    assert script.calls == [(0, None)]
    assert (asked.value, asked.done, asked.why, asked.error) == (7, True, None, None)
    assert (asked.calls, asked.texts, asked.text) == (1, ("7",), "7")
    assert (asked.input_tokens, asked.output_tokens, asked.cost_usd) == (10, 2, 0.01)


def test_an_unreadable_answer_is_asked_again_with_a_note_naming_why() -> None:
    script = Script(answer("seven"), answer("about 7"), answer("7"))
    asked = ask(script, retries=2, re_ask_note=HOW)
    assert script.calls == [
        (0, None),
        (1, "Your previous answer could not be read (not a number: 'seven'). " + HOW),
        (2, "Your previous answer could not be read (not a number: 'about 7'). " + HOW),
    ]
    assert (asked.value, asked.done, asked.calls) == (7, True, 3)
    assert asked.texts == ("seven", "about 7", "7") and asked.text == "7"
    assert asked.cost_usd == pytest.approx(0.03) and asked.latency_s == 1.5 and not asked.cached


def test_after_the_retries_the_answer_stays_unread_with_every_raw_text() -> None:
    script = Script(answer("a"), answer("b"), answer("c"), answer("7"))
    asked = ask(script, retries=2, re_ask_note=HOW)
    assert [attempt for attempt, _ in script.calls] == [0, 1, 2]  # never a fourth call
    assert len(script.replies) == 1
    assert (asked.value, asked.done, asked.error) == (None, False, None)
    assert asked.why == "not a number: 'c'"  # the unscored reason: the last answer's
    assert asked.texts == ("a", "b", "c")


def test_no_retries_and_negative_retries_make_one_call() -> None:
    for retries in (0, -3):
        script = Script(answer("x"), answer("7"))
        asked = ask(script, retries=retries, re_ask_note=HOW)
        assert script.calls == [(0, None)] and not asked.done


def test_a_failed_call_ends_the_asking_and_keeps_what_was_read_before() -> None:
    script = Script(answer("x"), failed(), answer("7"))
    asked = ask(script, retries=2, re_ask_note=HOW)
    assert len(script.calls) == 2
    assert asked.error == "HTTP 503" and asked.calls == 2
    assert asked.texts == ("x",) and asked.text == "x"  # the failed call has no text
    assert asked.why == "not a number: 'x'" and not asked.done


def test_a_failed_first_call_has_nothing_read() -> None:
    asked = ask(Script(failed("timed out")), retries=2, re_ask_note=HOW)
    assert asked.last is None and asked.value is None and asked.text is None
    assert asked.error == "timed out" and asked.calls == 1


def test_with_retry_errors_a_failed_call_is_asked_again() -> None:
    script = Script(failed(), answer("7"))
    asked = ask(script, retries=2, retry_errors=True)
    assert script.calls == [(0, None), (1, None)]  # without a note: the same prompt again
    assert (asked.value, asked.error, asked.calls) == (7, None, 2)
    script = Script(answer("x"), failed(), failed())
    asked = ask(script, retries=2, retry_errors=True)
    assert asked.calls == 3 and asked.error == "HTTP 503"  # the last call's error


def test_a_note_callable_writes_the_whole_note() -> None:
    script = Script(answer("x"), answer("7"))
    asked = ask(script, retries=1, re_ask_note=lambda why: f"Fix this: {why}")
    assert script.calls[1] == (1, "Fix this: not a number: 'x'") and asked.done
    assert could_not_read(HOW)("why") == f"Your previous answer could not be read (why). {HOW}"


def test_cost_is_unknown_when_one_call_price_is_and_cached_only_when_every_call_was() -> None:
    asked = ask(Script(answer("x", cached=True), answer("7", cost=None)), retries=1)
    assert asked.cost_usd is None and not asked.cached
    asked = ask(Script(answer("x", cached=True), answer("7", cached=True)), retries=1)
    assert asked.cached and asked.cost_usd == pytest.approx(0.02)
