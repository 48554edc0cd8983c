"""``qualspec lab`` against the fake server (an OpenAI-compatible endpoint from
``OPENAI_BASE_URL``), its bad input (exit 2, one line), and ``qualspec serve``'s refusal
to bind elsewhere without a token."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from qualspec.cli import main
from qualspec.testing import FakeServer, LabScript


@pytest.fixture
def script() -> LabScript:
    return LabScript(scores=[0.5, 0.95])


@pytest.fixture
def server(script: LabScript, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    with FakeServer(judge_reply=script.evaluate, answer=script.generate) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-cli-lab")
        yield srv


def _lab(*extra: str) -> int:
    argv = ["lab", "Explain tides", "--format", "Two sentences", "--criteria", "Moon"]
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--model", "openai/gen", *extra])
    return int(exc.value.code or 0)


def test_lab_prints_each_iteration_and_the_best_answer(
    server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _lab("--iter-max", "4", "--threshold", "0.9") == 0
    out, err = capsys.readouterr()
    assert "iteration 1: score 0.50 (does not meet)" in err
    assert "iteration 2: score 0.95 (meets)" in err
    assert "best answer: iteration 2 of 2, score 0.95 (met the threshold 0.9)" in out
    assert out.rstrip().endswith("Answer 2")


def test_lab_json_and_exit_1_when_the_threshold_is_not_met(
    server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _lab("--iter-max", "1", "--threshold", "0.9", "--json") == 1
    result = json.loads(capsys.readouterr().out)
    assert result["success"] is False and result["final_score"] == 0.5
    assert result["metadata"]["run_id"]


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--iter-max", "0", "expected 1 or more"),
        ("--iter-max", "11", "expected 1 to 10"),
        ("--threshold", "1.5", "expected a score from 0 to 1"),
    ],
)
def test_lab_bad_flags_exit_2_with_one_line(
    server: FakeServer, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    assert _lab(flag, value) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert server.calls == 0


def test_lab_empty_instruction_exits_2_naming_the_field(
    server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["lab", "", "--format", "x", "--criteria", "y", "--model", "openai/gen"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "instruct" in err and len(err.strip().splitlines()) == 1
    assert server.calls == 0


def test_serve_refuses_another_address_without_a_token(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QUALSPEC_WEB_TOKEN", raising=False)
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--host", "0.0.0.0", "--port", "0"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "refusing to serve on 0.0.0.0 without a token" in err and "--token" in err
