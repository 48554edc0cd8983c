"""The names a plan is narrowed to: model addresses, ``--candidates``/``--roles``/
``--scenarios`` selections and ``--temps``, each checked with a one-line error."""

from __future__ import annotations

from collections.abc import Sequence

from qualspec.errors import ConfigError
from qualspec.messages import did_you_mean

__all__ = ["MAX_TEMPERATURE", "parse_temperatures", "run_temperatures", "select", "split_model"]

MAX_TEMPERATURE = 2.0


def parse_temperatures(text: str) -> tuple[float, ...]:
    """Parse ``--temps``: comma-separated numbers (``"0,0.7"``) or a preset name.

    Raises:
        ConfigError: When a value is not a number in 0..2 or the preset is unknown.
    """
    from qualspec.spec import TEMPERATURE_PRESETS

    name = text.strip()
    if name in TEMPERATURE_PRESETS:
        return TEMPERATURE_PRESETS[name]
    values: list[float] = []
    for part in name.split(","):
        try:
            value = float(part.strip())
        except ValueError:
            presets = ", ".join(TEMPERATURE_PRESETS)
            hint = did_you_mean(name, TEMPERATURE_PRESETS, after=" ")
            raise ConfigError(
                f"Invalid temperatures {text!r}: {hint}give numbers like 0,0.7 "
                f"or a preset ({presets})"
            ) from None
        if not 0.0 <= value <= MAX_TEMPERATURE:
            raise ConfigError(f"Temperature {value:g} is outside 0..2: give values from 0 to 2")
        values.append(value)
    return tuple(dict.fromkeys(values))


def select(kind: str, flag: str, names: Sequence[str] | None, valid: list[str]) -> list[str]:
    """The ``valid`` names that ``names`` selects (``--{flag}``), in their order; all of
    them when none is given.

    Raises:
        ConfigError: An unknown name (with the closest valid one), or a selection of a
            kind the suite does not define.
    """
    if not names:
        return valid
    if not valid:
        raise ConfigError(f"{flag} was given but the suite defines no {kind}s: remove {flag}")
    for name in names:
        if name not in valid:
            hint = did_you_mean(name, valid, after=" ")
            raise ConfigError(
                f"Unknown {kind} {name!r} in {flag}: {hint}valid {kind}s: {', '.join(valid)}"
            )
    wanted = set(names)
    return [name for name in valid if name in wanted]


def split_model(address: str) -> tuple[str, str]:
    """``(provider, model)`` of a ``provider/model`` address.

    Raises:
        ConfigError: Not ``provider/model``.
    """
    provider, sep, model = address.strip().partition("/")
    if not sep or not provider or not model:
        raise ConfigError(
            f"Model address {address!r} must be provider/model, e.g. local/smollm2 or "
            "openai/gpt-4o-mini"
        )
    return provider, model


def run_temperatures(
    suite_values: tuple[float | None, ...], override: Sequence[float] | str | None
) -> tuple[float | None, ...]:
    """The run's temperatures: the suite's, or ``override`` (numbers, or text for
    :func:`parse_temperatures`), each checked.

    Raises:
        ConfigError: No temperature, or one outside 0..2.
    """
    if override is None:
        return tuple(None if t is None else float(t) for t in suite_values)
    if isinstance(override, str):
        return parse_temperatures(override)
    values = tuple(dict.fromkeys(float(t) for t in override))
    if not values:
        raise ConfigError("No temperatures given: give at least one, e.g. --temps 0")
    for value in values:
        if not 0.0 <= value <= MAX_TEMPERATURE:
            raise ConfigError(f"Temperature {value:g} is outside 0..2: give values from 0 to 2")
    return values
