"""A real OpenAI-compatible server nobody here wrote: llama-cpp-python's own
``python -m llama_cpp.server`` serving the SmolLM2 GGUF, as candidate and judge.

It refuses ``response_format: json_schema`` (HTTP 500, "Input should be 'text' or
'json_object'"); the judge must step down to ``json_object`` and record it.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from qualspec.cli import main

pytestmark = pytest.mark.embedded_model

SUITE = """
name: llama-server
providers:
  llama: {type: openai, base_url: "%(url)s", timeout: 600, max_concurrency: 1}
candidates:
  - {name: smol, model: llama/smollm2, params: {max_tokens: 48}}
judge: {model: llama/smollm2}
scenarios:
  - name: capital
    prompt: "What is the capital of France? Answer in one sentence."
    criteria: ["Names Paris as the capital"]
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# a fresh server for each test: llama.cpp's server reuses the prompt cache a previous
# request left, which changes the model's numbers (and so what a judge writes) from what
# a new server gives the same request
@pytest.fixture
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from qualspec.providers import resolve_model_path

    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(resolve_model_path("smollm2")),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "2048",
                # one thread (as the embedded model in these tests): llama.cpp's threads
                # spin waiting for each other on a busy 2-core machine
                "--n_threads",
                "1",
                "--n_threads_batch",
                "1",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama_cpp.server did not start: {log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.timeout(1200)
def test_a_suite_runs_against_llama_cpp_server_as_candidate_and_judge(
    llama_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE % {"url": llama_server})
    out = tmp_path / "out.json"
    with pytest.raises(SystemExit) as exc:
        main(["run", str(suite), "--quiet", "--output", str(out), "--no-calibration"])
    assert exc.value.code in (0, None)
    data = json.loads(out.read_text())
    (response,) = data["responses"]
    assert response["error"] is None and response["text"]
    judged = response["judgments"]
    assert judged
    for j in judged:  # scored, or unscored with a visible reason: never silently nothing
        assert j["score"] is not None or (j["unscored_reason"] or j["error"])
    # the server refused json_schema; the judge stepped down to json_object and says so
    assert data["run"]["metadata"]["structured_output"] == {"llama": "json_object"}


EXPECTED_SUITE = """
name: llama-server-expected
providers:
  llama: {type: openai, base_url: "%(url)s", timeout: 600, max_concurrency: 1}
candidates:
  - {name: smol, model: llama/smollm2, params: {max_tokens: 24}}
judge: {model: llama/smollm2, scoring: expected, structured_output: json_object}
scenarios:
  - name: capital
    prompt: "What is the capital of France? Answer in one sentence."
    criteria: ["names Paris as the capital"]
"""


@pytest.mark.timeout(1200)
def test_expected_scores_from_llama_cpp_server_log_probabilities(
    llama_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """scoring: expected against the real server (issue 21): it returns token
    log-probabilities, and the expected score and its mass are recorded."""
    from helpers_expected import assert_expected_consistent

    monkeypatch.chdir(tmp_path)
    suite = tmp_path / "suite.yaml"
    suite.write_text(EXPECTED_SUITE % {"url": llama_server})
    out = tmp_path / "out.json"
    with pytest.raises(SystemExit) as exc:
        main(["run", str(suite), "--quiet", "--output", str(out), "--no-calibration"])
    assert exc.value.code in (0, 1, None)  # 1: the answer failed its criterion
    data = json.loads(out.read_text())
    (response,) = data["responses"]
    (judgment,) = response["judgments"]
    assert judgment["error"] is None
    assert_expected_consistent(judgment["score"], judgment["details"])
