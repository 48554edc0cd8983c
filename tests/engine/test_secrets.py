"""No secrets anywhere: a canary API key that the provider really sends is found in none of
the database files (with -wal/-shm), the results JSON, the exports, or the CLI's output.

The fake server runs in the test process (its request log proves the key was sent) and,
like some real servers, echoes the Authorization header it received in its error bodies,
so the error paths get a chance to leak it too.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers_integration import (
    cli_env,
    describe,
    files_containing,
    open_store,
    run_cli,
    run_ids,
    write_suite,
)

from helpers_cli import run_cli as run_cli_here
from qualspec.judges import DEFAULT_PAIRS
from qualspec.testing import FakeServer


class EchoingServer(FakeServer):
    """A FakeServer whose error bodies quote the Authorization header they got.

    ``unauthorized_from``: from that call on (1-based, counting every model call), answer
    401 whatever the key.
    """

    unauthorized_from: int | None = None

    async def _handle(self, request: Any) -> Any:
        from aiohttp import web

        response = await super()._handle(request)
        status = response.status
        if self.unauthorized_from is not None and self.calls >= self.unauthorized_from:
            status = 401
        if status < 400:
            return response
        auth = request.headers.get("Authorization", "")
        message = f"Incorrect API key provided: {auth}. Request: {request.headers!r}"
        return web.json_response({"error": {"message": message, "type": "echo"}}, status=status)


@pytest.fixture
def server() -> Iterator[EchoingServer]:
    with EchoingServer() as srv:
        yield srv


def _sent_keys(server: FakeServer) -> list[str]:
    return [headers.get("Authorization", "") for _t, headers, _body in server.request_log]


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    """The CLI's home, with a connection held open on its database all along.

    That keeps SQLite from checkpointing and deleting the write-ahead log when a CLI
    process exits, so the -wal file is there to be searched too.
    """
    home = tmp_path / "home"
    with open_store(home) as watcher:
        watcher.list_runs()
        yield home


def test_canary_keys_reach_no_file_and_no_output(
    server: EchoingServer,
    home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    canary_a = f"sk-canary-{uuid.uuid4().hex}"
    canary_b = f"sk-canary-{uuid.uuid4().hex}"
    suite = write_suite(tmp_path / "suite.yaml", server.base_url, n_inputs=4, name="secrets")
    outputs: list[tuple[str, str]] = []  # (what, text) of every CLI output

    def cli(args: list[str], key: str = canary_a) -> Any:
        result = run_cli(args, cwd=tmp_path, env=cli_env(home, key))
        outputs.append((f"qualspec {' '.join(args)} (stdout)", result.stdout))
        outputs.append((f"qualspec {' '.join(args)} (stderr)", result.stderr))
        return result

    # run A: the key is right; the first call gets a 400 whose body quotes the key
    # (not retried, recorded as the cell's error), the rest succeed and are judged
    server.require_key = canary_a
    server.fail_next(1, status=400)
    run_a = cli(
        [
            "run",
            str(suite),
            "--max-concurrency",
            "1",
            "--show-responses",
            "--output",
            "a.json",
            "--no-calibration",
        ]
    )
    assert run_a.returncode == 0, describe(run_a)
    assert server.calls == 7  # 4 answers (one failed) + 3 judgments
    assert _sent_keys(server) == [f"Bearer {canary_a}"] * 7  # the provider did send it
    (run_a_id,) = run_ids(home)
    with open_store(home) as store:
        record_a = store.load_run(run_a_id)
    (failed,) = [r for r in record_a.responses if r.error is not None]
    # the server quoted the key in its error: it was masked before it was recorded
    assert "HTTP 400" in (failed.error or "") and "***" in (failed.error or "")
    assert len(record_a.judgments) == 3

    # run B: another key, no cache; its third call is refused with 401 (quoting the key),
    # which stops the run; --debug adds the traceback to the output
    server.reset()
    server.require_key = canary_b
    server.unauthorized_from = 3
    run_b = cli(
        ["--debug", "run", str(suite), "--max-concurrency", "1", "--no-cache", "--no-calibration"],
        key=canary_b,
    )
    assert run_b.returncode == 1, describe(run_b)
    assert "authentication failed" in run_b.stderr
    assert "FAKE_KEY" in run_b.stderr
    assert "Traceback" in run_b.stderr
    # one call at a time: the third is the last; none arrived after its 401 was sent
    assert server.calls == 3
    (stop,) = [sent for _arrived, status, sent in server.exchanges if status == 401]
    assert max(arrived for arrived, _status, _sent in server.exchanges) < stop
    assert _sent_keys(server) == [f"Bearer {canary_b}"] * server.calls
    assert len(run_ids(home)) == 2

    # run C: -vv logs every retry, and the server's error message quotes the key
    server.reset()
    server.require_key = canary_a
    server.unauthorized_from = None
    server.fail_next(2, status=500)
    run_c = cli(
        ["run", str(suite), "-vv", "--max-concurrency", "1", "--no-cache", "--quiet"]
        + ["--no-calibration"]
    )
    assert run_c.returncode == 0, describe(run_c)
    assert "retrying in" in run_c.stderr and "HTTP 500" in run_c.stderr, run_c.stderr
    assert "***" in run_c.stderr  # the quoted key, masked
    assert len(run_ids(home)) == 3

    # everything that reads the store back: commands that call no provider, so in this
    # process (a process each would add only start-up time), with the CLI's environment
    for name, value in cli_env(home, canary_a).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)

    def read(args: list[str]) -> subprocess.CompletedProcess[str]:
        code, out, err = run_cli_here(capsys, *args)
        outputs.append((f"qualspec {' '.join(args)} (stdout)", out))
        outputs.append((f"qualspec {' '.join(args)} (stderr)", err))
        return subprocess.CompletedProcess(args, code, out, err)

    for run_id in run_ids(home):
        for fmt in ("json", "jsonl", "csv"):
            exported = read(["runs", "export", run_id, "--format", fmt])
            assert exported.returncode == 0, describe(exported)
            assert exported.stdout.strip()
            written = read(
                ["runs", "export", run_id, "--format", fmt, "--output", f"{run_id}.{fmt}"]
            )
            assert written.returncode == 0, describe(written)
        shown = read(["runs", "show", run_id, "--show-responses"])
        assert shown.returncode == 0, describe(shown)
    for args in (["runs", "list"], ["prompts", "list"], ["cache", "stats"]):
        assert read(args).returncode == 0
    diffed = read(["diff", *run_ids(home)[:2], "--format", "json"])
    assert diffed.returncode == 0, describe(diffed)

    # the results JSON and the database files (WAL and shared memory included) exist ...
    assert json.loads((tmp_path / "a.json").read_text())["schema_version"]
    db_files = {p.name: p.stat().st_size for p in home.iterdir() if p.name.startswith("qualspec")}
    assert db_files.get("qualspec.db") and db_files.get("qualspec.db-wal"), db_files
    # ... and no file under the test folder, nor any output, holds either key
    for canary in (canary_a, canary_b):
        assert files_containing(canary, tmp_path) == [], f"{canary} leaked (files: {db_files})"
        # the random part alone, in case a prefix was cut or the key re-encoded
        assert files_containing(canary[len("sk-canary-") :], tmp_path) == []
        leaks = [what for what, text in outputs if canary[len("sk-canary-") :] in text]
        assert leaks == [], leaks


class EchoingAnswers(FakeServer):
    """A FakeServer whose answers quote the Authorization header (as some proxies do)."""

    last_auth = ""

    async def _handle(self, request: Any) -> Any:
        self.last_auth = request.headers.get("Authorization", "")
        return await super()._handle(request)

    def _answer(self, body: dict[str, Any], anthropic: bool) -> dict[str, Any]:
        payload = super()._answer(body, anthropic)
        message = payload["choices"][0]["message"]
        if "score" not in message["content"]:  # candidate answers, not the judge's JSON
            message["content"] += f" Your key is {self.last_auth}."
        return payload


def test_a_key_echoed_in_answers_reaches_no_file_and_no_output(
    home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    canary = f"sk-canary-{uuid.uuid4().hex}"
    with EchoingAnswers() as echo:
        suite = write_suite(tmp_path / "suite.yaml", echo.base_url, n_inputs=2, name="echo")
        env = cli_env(home, canary)
        outputs = []
        for args in (
            ["run", str(suite), "--show-responses", "--output", "a.json"],
            ["run", str(suite), "--show-responses", "--output", "b.json"],  # from the cache
        ):
            result = run_cli(args, cwd=tmp_path, env=env)
            assert result.returncode == 0, describe(result)
            outputs += [result.stdout, result.stderr]
        # 2 answers + 2 judgments, and the judge's calibration (measured once, then cached)
        assert _sent_keys(echo) == [f"Bearer {canary}"] * (4 + 2 * DEFAULT_PAIRS)
    assert "Your key is Bearer ***" in outputs[0]
    # the exports call no provider: in this process, with the CLI's environment
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    for run_id in run_ids(home):
        for fmt in ("json", "csv"):
            code, out, err = run_cli_here(capsys, "runs", "export", run_id, "--format", fmt)
            assert code == 0, out + err
            outputs.append(out)
    secret = canary[len("sk-canary-") :]
    assert files_containing(secret, tmp_path) == []
    assert [text for text in outputs if secret in text] == []
