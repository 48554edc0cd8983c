"""The embedded model's token log-probabilities (asked for by expected scoring) are the
ones llama-cpp-python's own ``logprobs`` gives, read from the logits at numpy speed."""

from __future__ import annotations

import asyncio

import llama_cpp
import pytest

from qualspec.providers import ChatRequest, Message, resolve_model_path
from qualspec.providers._local import LocalProvider, unload_local_models

pytestmark = pytest.mark.embedded_model

MESSAGES = (
    Message("system", 'Answer with JSON: {"score": 0-10}.'),
    Message("user", "How good is 'Paris' as the capital of France?"),
)


@pytest.mark.timeout(900)
def test_local_logprobs_match_llama_cpp_pythons_own() -> None:
    request = ChatRequest(
        model="smollm2",
        messages=MESSAGES,
        temperature=0.0,
        max_tokens=10,
        params={"logprobs": True, "top_logprobs": 5},
    )
    try:
        mine = asyncio.run(LocalProvider(n_threads=1).complete(request))
    finally:
        unload_local_models()
    llama = llama_cpp.Llama(
        model_path=str(resolve_model_path("smollm2")),
        n_ctx=2048,
        n_threads=1,
        n_batch=64,
        logits_all=True,
        verbose=False,
    )
    theirs = llama.create_chat_completion(
        messages=[{"role": m.role, "content": m.content} for m in MESSAGES],
        temperature=0.0,
        max_tokens=10,
        logprobs=True,
        top_logprobs=5,
    )
    content = theirs["choices"][0]["logprobs"]["content"]
    assert mine.text == theirs["choices"][0]["message"]["content"]
    assert mine.logprobs is not None
    assert "".join(t.token for t in mine.logprobs) == mine.text
    assert [t.token for t in mine.logprobs] == [c["token"] for c in content]
    for token, their in zip(mine.logprobs, content, strict=True):
        assert token.logprob == pytest.approx(float(their["logprob"]), abs=1e-3)
        top = {t["token"]: float(t["logprob"]) for t in their["top_logprobs"]}
        for alternative, logprob in token.top:
            if alternative in top:
                assert logprob == pytest.approx(top[alternative], abs=1e-3)
        assert token.top[0][0] in top  # the most likely one is theirs too
