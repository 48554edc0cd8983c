"""``base_urls`` (replicas) in a suite: one of base_url and base_urls, each URL an http(s)
one listed once, only for OpenAI-compatible servers; a mistake is one line at its field."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualspec.cli import main
from qualspec.errors import SpecError
from qualspec.spec import load_suite

SUITE = """\
name: replicas
candidates:
  - {name: a, model: llama/smollm2}
scenarios: [{name: x, prompt: hi, criteria: [c]}]
providers:
  llama: PROVIDER
"""


def _write(tmp_path: Path, provider: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(SUITE.replace("PROVIDER", provider))
    return path


@pytest.mark.parametrize(
    ("provider", "field", "words"),
    [
        (
            "{base_url: 'http://h:1/v1', base_urls: ['http://h:2/v1']}",
            "providers.llama",
            "either base_url (one server) or base_urls (its replicas), not both",
        ),
        ("{base_urls: []}", "providers.llama.base_urls", "base_urls is empty"),
        (
            "{base_urls: ['http://h:1/v1', 'h:2/v1']}",
            "providers.llama.base_urls",
            "'h:2/v1' must start with http:// or https://",
        ),
        (
            "{base_urls: ['http://h:1/v1', 'http://h:1/v1/']}",
            "providers.llama.base_urls",
            "lists 'http://h:1/v1' twice",
        ),
        (
            "{type: anthropic, base_urls: ['http://h:1/v1']}",
            "providers.llama",
            "for OpenAI-compatible servers (type: openai), not type: anthropic",
        ),
    ],
)
def test_a_wrong_replica_list_is_one_line_at_its_field(
    tmp_path: Path, provider: str, field: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, provider)
    with pytest.raises(SpecError) as caught:
        load_suite(path)
    (issue,) = caught.value.issues
    assert (issue.path, issue.field, issue.line) == (str(path), field, 6)
    assert words in issue.message
    with pytest.raises(SystemExit) as exited:
        main(["run", str(path), "--dry-run"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.strip()]
    assert line.startswith(f"{path}:6:") and field in line and words in line
    assert "Traceback" not in err


def test_a_replica_list_loads_and_dry_runs(tmp_path: Path) -> None:
    path = _write(tmp_path, "{base_urls: ['http://h:1/v1', 'http://h:2/v1'], max_concurrency: 2}")
    suite = load_suite(path)
    config = suite.evaluation.providers["llama"]
    assert config.base_urls == ["http://h:1/v1", "http://h:2/v1"] and config.base_url is None
    with pytest.raises(SystemExit) as exited:
        main(["run", str(path), "--dry-run"])
    assert exited.value.code in (0, None)
