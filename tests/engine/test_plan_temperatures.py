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


# ------------------------------------------------------- no temperatures: the provider's own


def _suite(**fields: object):  # type: ignore[no-untyped-def]
    from qualspec.spec import AtTemperature, Candidate, Evaluation, Scenario, load_evaluation

    scenario = Scenario(
        name="s",
        prompt="Dose?",
        criteria=["Is accurate."],
        at_temperature=[AtTemperature(temperature=0.0, criterion="Is conservative.")],
    )
    evaluation = Evaluation(
        name="t",
        candidates=[Candidate(name="c", model="openai/gpt-4o-mini")],
        scenarios=[scenario],
        **fields,  # type: ignore[arg-type]
    )
    return load_evaluation(evaluation)


def test_a_suite_without_temperatures_sends_none() -> None:
    from qualspec.engine._plan import expand

    plan = expand(_suite())
    assert plan.temperatures == (None,)
    (item,) = plan.items
    assert item.temperature is None
    # at_temperature criteria apply at a temperature that is sent: not here
    assert item.criteria == ("Is accurate.",)
    # another call than an explicit 0.0 (the cache and resume keep them apart)
    explicit = expand(_suite(temperatures=[0.0]))
    (zero,) = explicit.items
    assert zero.temperature == 0.0 and zero.criteria == ("Is accurate.", "Is conservative.")
    assert zero.call_key != item.call_key
    # --temps still overrides
    assert expand(_suite(), temperatures="0,0.7").temperatures == (0.0, 0.7)
