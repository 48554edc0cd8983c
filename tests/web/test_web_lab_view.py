"""The Lab's pages (issue 19, item 4): the best answer comes first, then the score trend
(an SVG drawn by the server: no inline script or style) and each iteration with its
changes from the one before (a word diff marked with ins/del); errors stand out (not
muted text) and are said in the Lab's terms (its Model and Evaluator fields, the
environment variables of ``qualspec serve``), never as "providers: in the suite"."""

from __future__ import annotations

import html
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers_web import KEY_ENV, lab_body, providers
from starlette.testclient import TestClient

from qualspec.lab import GenerateAnswerRequest
from qualspec.testing import FakeServer, LabScript
from qualspec.web import create_app
from qualspec.web._lab_view import explain, word_diff

pytestmark = pytest.mark.timeout(300)

ANSWERS = (
    "The moon pulls the sea.",
    "The moon pulls the oceans, so the sea rises twice a day.",
    "The moon pulls the oceans twice a day.",
)


def _text(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[httpx.Client]:
    monkeypatch.setenv(KEY_ENV, "sk-web-lab")
    script = LabScript(scores=[0.3, 0.7, 0.5], answers=ANSWERS)
    with FakeServer(judge_reply=script.evaluate, answer=script.generate) as server:
        app = create_app(db=f"sqlite:///{tmp_path / 'lab.db'}", providers=providers(server))
        with TestClient(app, base_url="http://127.0.0.1") as test_client:
            yield test_client


def test_the_best_answer_comes_first_then_the_trend_and_the_changes(
    client: httpx.Client,
) -> None:
    form = {k: str(v) for k, v in lab_body(iter_max=3).items()}
    posted = client.post("/lab", data=form).text
    run_id = re.search(r'href="/runs/([^"]+)"', posted)
    assert run_id is not None
    stored = client.get(f"/runs/{run_id.group(1)}").text  # the Lab run's own page
    for page in (posted, stored):
        # the best answer (iteration 2, not the last) before the trend, before the iterations
        best = page.index('<pre class="answer final">')
        chart = page.index('<svg class="trend"')
        cards = page.index('<article class="iteration')
        assert best < chart < cards
        assert page[best:].split(">", 1)[1].startswith(ANSWERS[1])
        # one bar per iteration, its height the score, the best one marked, the threshold
        bars = re.findall(r'<g class="bar ([a-z ]+)" data-iteration="(\d)">', page)
        assert bars == [("fail", "1"), ("fail best", "2"), ("fail", "3")]
        heights = [float(h) for h in re.findall(r'<rect [^>]*height="([\d.]+)"', page)]
        assert heights == pytest.approx([24.0, 56.0, 40.0])  # 0.3, 0.7, 0.5 of 80
        assert 'class="threshold"' in page and "style=" not in page
        # iteration 2's changes from iteration 1, word by word
        changes = re.findall(r'<pre class="diff">(.*?)</pre>', page, re.S)
        assert len(changes) == 2  # iterations 2 and 3
        assert changes[0] == (
            "The moon pulls the <ins>oceans, so the </ins>sea<ins> rises twice a day</ins>."
        )
        assert "<del>, so the sea rises</del>" in changes[1]
        assert "Changes from iteration 1:" in _text(page)


def test_word_diff_keeps_every_word_in_order() -> None:
    pieces = word_diff("a b c", "a x c d")
    assert pieces == [("=", "a "), ("-", "b"), ("+", "x"), ("=", " c"), ("+", " d")]
    assert "".join(t for op, t in pieces if op != "+") == "a b c"
    assert "".join(t for op, t in pieces if op != "-") == "a x c d"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_errors_stand_out_and_say_how_to_fix_them_in_the_labs_terms(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'lab.db'}"
    body = lab_body(iter_max=1, model="ollama/llama3", judge_model=None)
    form = {k: str(v) for k, v in body.items() if v is not None}
    # a server that wants a key the ollama provider never sends: refused (401)
    with FakeServer(require_key="secret") as server:
        monkeypatch.setenv("OLLAMA_BASE_URL", server.base_url)
        with TestClient(create_app(db=db), base_url="http://127.0.0.1") as client:
            detail = client.post("/api/generate-answer", json=body).json()["detail"]
            assert "suite" not in detail
            assert detail.startswith("Model and Evaluator fields (ollama/llama3): ")
            assert "provider 'ollama' sends no API key" in detail
            assert "OLLAMA_BASE_URL" in detail
    # no server at all: the iteration's error names the field and the variable to set
    monkeypatch.setenv("OLLAMA_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    with TestClient(create_app(db=db), base_url="http://127.0.0.1") as client:
        page = client.post("/lab", data=form).text
        error = re.search(r'<p class="error lab-error" role="alert">(.*?)</p>', page, re.S)
        assert error is not None, page[-3000:]
        said = html.unescape(error.group(1))
        assert said.startswith("Model and Evaluator fields (ollama/llama3): ")
        assert "Could not reach provider 'ollama'" in said
        assert "set OLLAMA_BASE_URL to its address and restart qualspec serve" in said
        assert "suite" not in said and "its base_url" not in said
        result = client.post("/api/generate-answer", json=body).json()
        assert "OLLAMA_BASE_URL" in result["iterations"][0]["error"]
        # a refused request: the status is an error box, not muted text
        refused = client.post("/lab", data={**form, "model": "nosuch/x"}).text
        assert '<p id="lab-status" class="note-box error"' in refused
        assert '<p id="lab-status" class="muted"' in client.get("/lab").text


def test_a_missing_key_says_where_to_set_it() -> None:
    lab = GenerateAnswerRequest(**lab_body(model="openai/gpt-4o-mini", judge_model=None))
    said = explain(
        "No API key for provider 'openai': set the environment variable OPENAI_API_KEY", lab
    )
    assert said == (
        "Model and Evaluator fields (openai/gpt-4o-mini): No API key for provider 'openai': "
        "set the environment variable OPENAI_API_KEY (in the environment of qualspec serve, "
        "then restart it)"
    )


def test_a_key_refused_once_does_not_fail_every_later_lab(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A provider that refuses the key stops the engine from calling anyone; the web app
    then starts afresh, so the next Lab (here on another provider) is not refused too."""
    from qualspec import ProviderConfig

    monkeypatch.setenv(KEY_ENV, "sk-wrong")
    db = f"sqlite:///{tmp_path / 'lab.db'}"
    script = LabScript(scores=[0.9])
    with (
        FakeServer(require_key="sk-right") as strict,
        FakeServer(judge_reply=script.evaluate, answer=script.generate) as open_server,
    ):
        configs = {
            **providers(strict),
            "open": ProviderConfig(type="openai", base_url=open_server.base_url),
        }
        with TestClient(create_app(db=db, providers=configs), base_url="http://127.0.0.1") as c:
            refused = c.post("/api/generate-answer", json=lab_body(iter_max=1))
            assert refused.status_code == 400
            assert "rejected the API key" in refused.json()["detail"]
            assert f"check the environment variable {KEY_ENV}" in refused.json()["detail"]
            body = lab_body(iter_max=1, model="open/gen", judge_model="open/eval")
            answered = c.post("/api/generate-answer", json=body)
            assert answered.status_code == 200, answered.text
            assert answered.json()["final_answer"] == "Answer 1"
        assert open_server.calls == 2
