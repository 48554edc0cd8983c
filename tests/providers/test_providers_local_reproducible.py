"""The embedded model's answer to a request does not depend on what the process asked before.

llama.cpp computes a token's numbers differently in a batch of one than in a batch of many;
with llama-cpp-python's prompt-prefix reuse, a repeated prompt had its last token evaluated
alone where a fresh process evaluated the whole prompt at once, so the logits moved (by up
to 0.8) and a near-tied greedy choice at temperature 0 flipped: "La femme de France, ..."
the first time, "The capital of France is Paris." every later time.

Each sequence runs in a fresh process (the first call of a process is the reference). A
call is compared by its text and by a digest of the logits llama.cpp holds after it (the
logits of its last evaluated token): the digest shows any difference in the numbers, also
where this machine's greedy choices happen not to flip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import llama_cpp  # the local extra must be installed
import pytest

pytestmark = pytest.mark.embedded_model

SCRIPT = r"""
import asyncio, hashlib, json, sys
import numpy as np
from qualspec.providers import ChatRequest, Message
from qualspec.providers._local import LocalProvider, _MODELS, unload_local_models

LONG_SYSTEM = "You are a strict judge. " + " ".join(
    f"Rule {i}: an answer must be accurate, brief and say where its facts come from."
    for i in range(12)
)  # about 200 tokens: several prompt blocks, shared by two requests
REQUESTS = {
    "capital": ("You are a helpful assistant.", "What is the capital of France?"),
    "hello": ("You are a cheerful assistant.", "Say hello."),
    "judge_a": (LONG_SYSTEM, "Judge this answer: Paris is the capital of France."),
    "judge_b": (LONG_SYSTEM, "Judge this answer: The Moon is made of cheese."),
}
provider = LocalProvider(n_threads=1)
out = []
for name in sys.argv[1].split(","):
    system, user = REQUESTS[name]
    request = ChatRequest(
        model="smollm2",
        messages=(Message("system", system), Message("user", user)),
        temperature=0.0,
        max_tokens=16,
    )
    response = asyncio.run(provider.complete(request))
    (model,) = _MODELS.values()
    llama = model._llama
    logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),))
    digest = hashlib.sha256(logits.tobytes()).hexdigest()[:16]
    out.append([name, response.text, digest])
unload_local_models()
print(json.dumps(out))
"""


def _calls_in_a_fresh_process(names: list[str]) -> list[tuple[str, str, str]]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, ",".join(names)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [tuple(row) for row in json.loads(done.stdout.strip().splitlines()[-1])]


def test_temperature_0_answers_do_not_depend_on_earlier_calls() -> None:
    assert llama_cpp.__version__
    first = _calls_in_a_fresh_process(
        ["capital", "capital", "hello", "capital", "judge_a", "judge_b", "judge_a"]
    )
    second = _calls_in_a_fresh_process(["judge_a", "capital"])  # each one fresh, or nearly
    seen: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for name, text, digest in first + second:
        assert text.strip(), name
        seen[name].add((text, digest))
    differing = {name: answers for name, answers in seen.items() if len(answers) > 1}
    assert not differing, f"one request, several answers (text, logits digest): {differing}"
