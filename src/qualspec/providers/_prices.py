"""Token prices (USD per million input/output tokens) per ``provider/model``.

The shipped table (``qualspec/data/prices.json``) is merged with the user's
``$QUALSPEC_HOME/prices.json`` (``./.qualspec/prices.json`` when ``QUALSPEC_HOME`` is
unset) or an explicit file; user entries win. Keys starting with ``_`` are comments.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from qualspec.errors import ConfigError

__all__ = ["PriceTable", "user_prices_path"]


def user_prices_path() -> Path:
    """Where the user's price overrides live: ``$QUALSPEC_HOME/prices.json``."""
    home = os.environ.get("QUALSPEC_HOME", "").strip()
    return Path(home or ".qualspec") / "prices.json"


def _parse(data: Any, source: str) -> dict[str, tuple[float, float]]:
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: prices must be a JSON object like "
            '{"openai/gpt-4o": {"input": 2.5, "output": 10}}'
        )
    table: dict[str, tuple[float, float]] = {}
    for key, value in data.items():
        if key.startswith("_"):
            continue
        try:
            price = (float(value["input"]), float(value["output"]))
        except (TypeError, KeyError, ValueError):
            raise ConfigError(
                f"{source}: price for {key!r} must be "
                '{"input": <USD per 1M tokens>, "output": <USD per 1M tokens>}'
            ) from None
        if price[0] < 0 or price[1] < 0:
            raise ConfigError(f"{source}: price for {key!r} must not be negative")
        table[key] = price
    return table


def _read_file(path: Path) -> dict[str, tuple[float, float]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"Cannot read the price file {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise ConfigError(f"The price file {path} is not valid JSON: {exc}") from exc
    return _parse(data, str(path))


class PriceTable:
    """Prices by ``provider/model``, with prefix matching for dated model versions.

    Example::

        prices = PriceTable.load()
        prices.price("openai", "gpt-4o-2024-08-06")      # (2.5, 10.0)
        prices.cost("openai", "gpt-4o", 1000, 500)        # 0.0075
    """

    def __init__(self, prices: Mapping[str, tuple[float, float]]) -> None:
        self._exact = dict(prices)
        prefixes = [(k[:-1], v) for k, v in self._exact.items() if k.endswith("*")]
        plain = [(k, v) for k, v in self._exact.items() if not k.endswith("*")]
        # longest first, so gpt-4o-mini wins over gpt-4o
        self._plain = sorted(plain, key=lambda kv: -len(kv[0]))
        self._wildcards = sorted(prefixes, key=lambda kv: -len(kv[0]))
        self._memo: dict[tuple[str, str], tuple[float, float] | None] = {}

    @classmethod
    def load(cls, path_override: Path | None = None) -> PriceTable:
        """The shipped prices merged with the user's file (``path_override`` if given)."""
        shipped = resources.files("qualspec").joinpath("data", "prices.json").read_text("utf-8")
        table = _parse(json.loads(shipped), "qualspec/data/prices.json")
        if path_override is not None:
            table.update(_read_file(Path(path_override)))
        else:
            user = user_prices_path()
            if user.is_file():
                table.update(_read_file(user))
        return cls(table)

    def as_dict(self) -> dict[str, tuple[float, float]]:
        """Every entry, as ``{"provider/model": (input, output)}``."""
        return dict(self._exact)

    def price(self, provider: str, model: str) -> tuple[float, float] | None:
        """``(input, output)`` USD per million tokens, or ``None`` if unknown."""
        key = (provider, model)
        if key in self._memo:  # called once per model call: look each model up once
            return self._memo[key]
        found = None
        for address in self._addresses(provider, model):
            found = self._lookup(address)
            if found is not None:
                break
        self._memo[key] = found
        return found

    def cost(
        self,
        provider: str,
        model: str,
        input_tokens: int | None,
        output_tokens: int | None,
    ) -> float | None:
        """USD for one call, or ``None`` when the price or a token count is unknown."""
        if input_tokens is None or output_tokens is None:
            return None
        price = self.price(provider, model)
        if price is None:
            return None
        return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000

    @staticmethod
    def _addresses(provider: str, model: str) -> list[str]:
        addresses = [f"{provider}/{model}"]
        if provider == "openrouter" and "/" in model:
            # openrouter/anthropic/claude-3.5-sonnet -> anthropic/claude-3-5-sonnet
            addresses += [model, model.replace(".", "-")] if "claude" in model else [model]
        return addresses

    def _lookup(self, address: str) -> tuple[float, float] | None:
        exact = self._exact.get(address)
        if exact is not None:
            return exact
        for key, value in self._plain:
            if address.startswith(key) and not address[len(key)].isalnum():
                return value
        for prefix, value in self._wildcards:
            if address.startswith(prefix):
                return value
        return None
