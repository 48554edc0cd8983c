"""``qualspec lab``'s errors speak of what the Lab takes (its flags, the environment), never
of a suite's ``providers:`` section: the Lab has no suite (issue 19, item 4)."""

from __future__ import annotations

import pytest

from helpers_cli import run_cli
from qualspec.testing import FakeServer

_ARGS = ("lab", "Explain tides", "--format", "Two sentences", "--criteria", "Moon")


def test_an_unknown_provider_names_the_flags_not_a_suite(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, *_ARGS, "--model", "nosuch/gen", "--iter-max", "1")
    assert code == 2, out + err
    assert "Unknown provider 'nosuch'" in err
    assert "--model or --judge, as PROVIDER/MODEL" in err
    assert "suite" not in out + err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_refused_key_names_the_environment_not_a_suite(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # ollama sends no key: the server's 401 used to say "set api_key_env for this provider
    # in the suite's providers section"
    with FakeServer(require_key="needed") as server:
        monkeypatch.setenv("OLLAMA_BASE_URL", server.base_url)
        code, out, err = run_cli(capsys, *_ARGS, "--model", "ollama/gen", "--iter-max", "1")
    assert code != 0
    assert "suite" not in out + err
    assert "OLLAMA_BASE_URL" in out + err
    assert "OPENAI_API_KEY" in out + err
