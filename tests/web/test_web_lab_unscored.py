"""The web Lab when no iteration was scored (issue 17, item 24): the page says so as the CLI
does (``no iteration was scored (N tried): ...``), names the answer shown the last one
written, and never reads "score unscored" or "iteration - of N"; a scored Lab still names
its best iteration."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers_web import KEY_ENV, lab_body, providers
from starlette.testclient import TestClient

from qualspec.testing import FakeServer, LabScript
from qualspec.web import create_app

STATIC = Path(__file__).parents[2] / "src" / "qualspec" / "web" / "static" / "lab.js"


def _text(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


@pytest.fixture
def lab(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[httpx.Client, FakeServer]]:
    monkeypatch.setenv(KEY_ENV, "sk-web-lab")
    script = LabScript(scores=request.param)
    with FakeServer(judge_reply=script.evaluate, answer=script.generate) as server:
        app = create_app(db=f"sqlite:///{tmp_path / 'lab.db'}", providers=providers(server))
        with TestClient(app, base_url="http://127.0.0.1") as client:  # runs the lifespan
            yield client, server


@pytest.mark.parametrize("lab", [["I cannot rate this."]], indirect=True)
def test_a_lab_with_nothing_scored_says_so_as_the_cli_does(
    lab: tuple[httpx.Client, FakeServer],
) -> None:
    client, _ = lab
    form = {k: str(v) for k, v in lab_body(iter_max=2, score_threshold=0.8).items()}
    page = client.post("/lab", data=form)
    assert page.status_code == 200
    shown = _text(page.text)
    assert "no iteration was scored (2 tried): did not meet the threshold 0.8" in shown
    assert "Last answer written" in shown and "Best answer" not in shown
    assert "score unscored" not in shown and "best score unscored" not in shown
    assert "iteration - of" not in shown
    run_id = re.search(r'href="/runs/([^"]+)"', page.text)
    assert run_id is not None
    # the Lab run's own page says the same
    stored = _text(client.get(f"/runs/{run_id.group(1)}").text)
    assert "no iteration was scored (2 tried): did not meet the threshold 0.8" in stored
    assert "best score unscored" not in stored and "Last answer written" in stored
    # and the page's script, which renders the streamed result, has the same words
    script = STATIC.read_text(encoding="utf-8")
    assert '"no iteration was scored ("' in script and "Last answer written" in script


@pytest.mark.parametrize("lab", [[0.4, 0.9]], indirect=True)
def test_a_scored_lab_names_its_best_iteration(lab: tuple[httpx.Client, FakeServer]) -> None:
    client, _ = lab
    form = {k: str(v) for k, v in lab_body(iter_max=3, score_threshold=0.8).items()}
    shown = _text(client.post("/lab", data=form).text)
    assert "Best answer" in shown
    assert "met the threshold 0.8 · iteration 2 of 2, score 0.90" in shown
    assert "no iteration was scored" not in shown
