"""The JSON API through httpx against the app in-process: the Lab's validation (422 and
413 naming the field, no model call), the Lab itself, runs, results, diff, the token, the
headers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from helpers_web import KEY_ENV, lab_body, providers

from qualspec.testing import FakeServer, LabScript
from qualspec.web import create_app

pytestmark = pytest.mark.asyncio


@pytest.fixture
def script() -> LabScript:
    return LabScript(scores=[0.4, 0.9])


@pytest.fixture
def server(script: LabScript, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv(KEY_ENV, "sk-web")
    with FakeServer(judge_reply=script.evaluate, answer=script.generate) as srv:
        yield srv


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'web.db'}"


def _client(app: Any, **kw: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", **kw)


@pytest_asyncio.fixture
async def client(server: FakeServer, db: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(db=db, providers=providers(server))
    async with _client(app) as c:
        yield c
    await app.fastapi.state.web.aclose()


def _fields(response: httpx.Response) -> list[str]:
    return [".".join(str(p) for p in d["loc"]) for d in response.json()["detail"]]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"iter_max": 0}, "body.iter_max"),
        ({"iter_max": 11}, "body.iter_max"),
        ({"iter_max": "3"}, "body.iter_max"),
        ({"score_threshold": 1.5}, "body.score_threshold"),
        ({"score_threshold": -0.1}, "body.score_threshold"),
        ({"score_threshold": "0.8"}, "body.score_threshold"),
        ({"iter_max": 2.5}, "body.iter_max"),
        ({"instruct": None}, "body.instruct"),
        ({"eval_crit": 7}, "body.eval_crit"),
        ({"resp_format": ""}, "body.resp_format"),
        ({"surprise": 1}, "body.surprise"),
    ],
)
async def test_invalid_lab_requests_are_422_naming_the_field_without_a_call(
    client: httpx.AsyncClient, server: FakeServer, change: dict[str, Any], field: str
) -> None:
    body = {k: v for k, v in {**lab_body(), **change}.items() if v is not None}
    response = await client.post("/api/generate-answer", json=body)
    assert response.status_code == 422, response.text
    assert field in _fields(response)
    assert server.calls == 0


@pytest.mark.parametrize("missing", ["instruct", "resp_format", "eval_crit"])
async def test_missing_fields_are_422(
    client: httpx.AsyncClient, server: FakeServer, missing: str
) -> None:
    body = lab_body()
    del body[missing]
    response = await client.post("/api/generate-answer", json=body)
    assert response.status_code == 422
    assert f"body.{missing}" in _fields(response)
    assert response.json()["detail"][0]["type"] == "missing"
    assert server.calls == 0


async def test_a_10_mb_body_is_413_without_a_call(
    client: httpx.AsyncClient, server: FakeServer
) -> None:
    body = lab_body(instruct="x" * 10_000_000)
    response = await client.post("/api/generate-answer", json=body)
    assert response.status_code == 413
    assert _fields(response) == ["body"]
    assert "limit" in response.json()["detail"][0]["msg"]

    # chunked, with no Content-Length: counted as it arrives
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b"x" * 1_000_000

    response = await client.post(
        "/api/generate-answer", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert server.calls == 0


async def test_malformed_json_is_422(client: httpx.AsyncClient, server: FakeServer) -> None:
    response = await client.post(
        "/api/generate-answer", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert server.calls == 0


async def test_generate_answer_then_the_run_is_listed_and_served(
    client: httpx.AsyncClient, script: LabScript
) -> None:
    response = await client.post("/api/generate-answer", json=lab_body())
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["success"] is True and result["total_iterations"] == 2
    assert result["final_answer"] == "Answer 2" and result["final_score"] == 0.9
    assert result["iterations"][0]["evaluation"]["improvement_suggestions"]
    assert "Verdict 1" in script.generation_prompts[1]
    run_id = result["metadata"]["run_id"]

    runs = (await client.get("/api/runs")).json()
    assert [r["id"] for r in runs] == [run_id] and runs[0]["kind"] == "lab"
    results = (await client.get(f"/api/runs/{run_id}")).json()
    assert len(results["responses"]) == 4
    assert (await client.get("/api/runs/nope-nope")).status_code == 404


async def test_the_stream_sends_each_iteration_then_the_result(
    client: httpx.AsyncClient,
) -> None:
    events: list[tuple[str, str]] = []
    async with client.stream(
        "POST", "/api/generate-answer/stream", json=lab_body(iter_max=2)
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        name = ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                events.append((name, line[6:]))
    assert [n for n, _ in events] == ["run", "iteration", "iteration", "result"]
    assert '"iteration_number":1' in events[1][1]
    assert '"changes":{"from":1' in events[2][1]  # the diff from iteration 1


async def test_diff_of_two_runs(client: httpx.AsyncClient) -> None:
    first = (await client.post("/api/generate-answer", json=lab_body())).json()
    second = (await client.post("/api/generate-answer", json=lab_body(iter_max=1))).json()
    a, b = first["metadata"]["run_id"], second["metadata"]["run_id"]
    response = await client.get("/api/diff", params={"a": a, "b": b})
    assert response.status_code == 200
    assert response.json()["run_a"] == a
    assert (await client.get("/api/diff", params={"a": a})).status_code == 422


async def test_openapi_describes_the_lab(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    request = spec["components"]["schemas"]["GenerateAnswerRequest"]
    assert request["properties"]["iter_max"]["maximum"] == 10
    assert set(request["required"]) == {"instruct", "resp_format", "eval_crit"}
    assert "/api/generate-answer" in spec["paths"]
    page = await client.get("/docs")
    assert page.status_code == 200 and "/api/generate-answer" in page.text
    assert "cdn" not in page.text.lower()


async def test_every_response_has_a_csp_and_no_cors(client: httpx.AsyncClient) -> None:
    for path in ("/runs", "/lab", "/api/runs", "/static/lab.js", "/nowhere"):
        response = await client.get(path, headers={"Origin": "http://evil.example"})
        assert "default-src 'none'" in response.headers["content-security-policy"], path
        assert "access-control-allow-origin" not in response.headers
        assert response.headers["x-content-type-options"] == "nosniff"


async def test_without_a_token_only_loopback_host_names_are_answered(
    server: FakeServer, db: str
) -> None:
    app = create_app(db=db, providers=providers(server))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://evil.example") as c:
        assert (await c.get("/api/runs")).status_code == 421


async def test_with_a_token_every_route_requires_it(server: FakeServer, db: str) -> None:
    app = create_app(db=db, providers=providers(server), token="s3cret-token")
    async with _client(app) as c:
        for path in ("/", "/runs", "/lab", "/api/runs", "/openapi.json", "/docs", "/static/lab.js"):
            assert (await c.get(path)).status_code == 401, path
        assert (await c.post("/api/generate-answer", json=lab_body())).status_code == 401
        bad = {"Authorization": "Bearer s3cret-tokex"}
        assert (await c.get("/api/runs", headers=bad)).status_code == 401
        good = {"Authorization": "Bearer s3cret-token"}
        assert (await c.get("/api/runs", headers=good)).status_code == 200
        assert (await c.get("/login", params={"token": "wrong"})).status_code == 401
        login = await c.get("/login", params={"token": "s3cret-token"})
        assert login.status_code == 303 and login.headers["location"] == "/runs"
        assert "HttpOnly" in login.headers["set-cookie"]
        assert "SameSite=Strict" in login.headers["set-cookie"]
        assert (await c.get("/runs")).status_code == 200  # the cookie now
    assert server.calls == 0
    await app.fastapi.state.web.aclose()


async def test_binding_elsewhere_needs_a_token() -> None:
    from qualspec.errors import ConfigError
    from qualspec.web import check_bind

    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", "t" * 16)
    with pytest.raises(ConfigError, match="--token"):
        check_bind("0.0.0.0", None)


async def test_the_lab_form_works_without_script(
    client: httpx.AsyncClient, server: FakeServer
) -> None:
    form = {k: str(v) for k, v in lab_body().items()}
    bad = await client.post("/lab", data={**form, "iter_max": "11"})
    assert bad.status_code == 422 and "iter_max" in bad.text
    assert server.calls == 0
    page = await client.post("/lab", data=form)
    assert page.status_code == 200
    assert 'class="iteration best" data-iteration="2"' in page.text
    assert "Verdict 1: rated 0.4." in page.text


async def test_pages_render_and_escape(client: httpx.AsyncClient) -> None:
    result = (await client.post("/api/generate-answer", json=lab_body(instruct="<b>hi</b>"))).json()
    run_id = result["metadata"]["run_id"]
    runs = await client.get("/runs", params={"lab": "1"})
    assert runs.status_code == 200 and run_id in runs.text
    page = await client.get(f"/runs/{run_id}")
    assert page.status_code == 200
    assert "&lt;b&gt;hi&lt;/b&gt;" in page.text and "<b>hi</b>" not in page.text
    diff = await client.get("/diff", params={"a": run_id, "b": run_id})
    assert diff.status_code == 200 and '<table class="diff">' in diff.text
    assert (
        await client.get("/diff", params={"a": run_id, "b": run_id, "noise": "x"})
    ).status_code == 422
    refs = await client.get("/references")
    assert refs.status_code == 200 and "No reference answers" in refs.text
    assert (await client.get("/runs/nope-nope")).status_code == 404
