"""The price table: shipped data, prefix matching, user overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qualspec.errors import ConfigError
from qualspec.providers import PriceTable


def test_exact_and_prefix_match() -> None:
    prices = PriceTable.load()
    assert prices.price("openai", "gpt-4o") == (2.5, 10.0)
    assert prices.price("openai", "gpt-4o-2024-08-06") == (2.5, 10.0)
    # the longest prefix wins
    assert prices.price("openai", "gpt-4o-mini-2024-07-18") == (0.15, 0.6)
    assert prices.price("anthropic", "claude-3-5-sonnet-20241022") == (3.0, 15.0)
    assert prices.price("anthropic", "claude-sonnet-4-5-20250929") == (3.0, 15.0)
    # a prefix must end at a word boundary
    assert prices.price("openai", "gpt-4oz") is None


def test_local_is_free_and_unknown_is_none() -> None:
    prices = PriceTable.load()
    assert prices.price("local", "smollm2") == (0.0, 0.0)
    assert prices.cost("local", "models/x.gguf", 1000, 1000) == 0.0
    assert prices.price("mylab", "whatever") is None
    assert prices.cost("mylab", "whatever", 10, 10) is None


def test_cost() -> None:
    prices = PriceTable.load()
    assert prices.cost("openai", "gpt-4o", 1000, 500) == pytest.approx(0.0075)
    assert prices.cost("openai", "gpt-4o", None, 500) is None


def test_openrouter_falls_back_to_the_upstream_model() -> None:
    prices = PriceTable.load()
    assert prices.price("openrouter", "openai/gpt-4o-mini") == (0.15, 0.6)
    assert prices.price("openrouter", "anthropic/claude-3.5-sonnet") == (3.0, 15.0)


def test_user_file_in_qualspec_home_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "prices.json").write_text(
        json.dumps(
            {
                "_comment": "ours",
                "openai/gpt-4o": {"input": 1, "output": 2},
                "mylab/*": {"input": 0.5, "output": 0.5},
            }
        )
    )
    monkeypatch.setenv("QUALSPEC_HOME", str(home))
    prices = PriceTable.load()
    assert prices.price("openai", "gpt-4o-2024-08-06") == (1.0, 2.0)
    assert prices.price("mylab", "m") == (0.5, 0.5)
    assert prices.price("openai", "gpt-4o-mini") == (0.15, 0.6)  # shipped entries stay


def test_explicit_override_path(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"vllm/qwen": {"input": 0.1, "output": 0.2}}))
    prices = PriceTable.load(path)
    assert prices.price("vllm", "qwen-7b") == (0.1, 0.2)


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[1, 2]",
        '{"openai/x": {"input": 1}}',
        '{"openai/x": {"input": -1, "output": 1}}',
    ],
)
def test_bad_user_file_is_one_line_config_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ConfigError) as info:
        PriceTable.load(path)
    assert "\n" not in str(info.value)
