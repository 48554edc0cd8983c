"""parse_temperatures: the --temps flag."""

from __future__ import annotations

import pytest

from qualspec.engine._plan import parse_temperatures
from qualspec.errors import ConfigError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0,0.7", (0.0, 0.7)),
        (" 0 , 1.5 ", (0.0, 1.5)),
        ("1", (1.0,)),
        ("stability_test", (0.0, 0.5, 1.0)),
        ("full_range", (0.0, 0.3, 0.5, 0.7, 1.0, 1.2, 1.5)),
        ("safety_probe", (0.0, 1.0, 1.5, 2.0)),
        ("0.5,0.5", (0.5,)),
    ],
)
def test_parse_temperatures(text: str, expected: tuple[float, ...]) -> None:
    assert parse_temperatures(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("stabilty", "Invalid temperatures 'stabilty': did you mean 'stability_test'?"),
        ("0,,1", "Invalid temperatures '0,,1': give numbers like 0,0.7 or a preset"),
        ("3", "Temperature 3 is outside 0..2"),
        ("-0.1", "Temperature -0.1 is outside 0..2"),
    ],
)
def test_bad_temperatures(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_temperatures(text)
    assert str(caught.value).startswith(message)
