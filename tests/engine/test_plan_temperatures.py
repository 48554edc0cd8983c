"""parse_temperatures: the --temps flag."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qualspec.engine import parse_temperatures
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
    from qualspec.engine import expand

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


# ------------------------------------------- at_temperature outside the run's temperatures


def test_an_at_temperature_entry_outside_the_temperatures_is_warned_about() -> None:
    from qualspec.engine import expand

    plan = expand(_suite(temperatures=[0.7, 1.0]))
    assert plan.warnings == (
        "scenario 's': at_temperature 0 is not one of the run's temperatures (0.7, 1); "
        "its criterion 'Is conservative.' is never judged",
    )
    assert all("Is conservative." not in item.criteria for item in plan.items)
    # inside the matrix (the suite's, or --temps): nothing to say
    assert expand(_suite(temperatures=[0.0, 1.0])).warnings == ()
    assert expand(_suite(temperatures=[0.7]), temperatures="0,0.7").warnings == ()
    # no temperature sent at all: never judged either
    (warning,) = expand(_suite()).warnings
    assert "(none sent)" in warning


def test_the_cli_says_it_before_any_call(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: t\n"
        "temperatures: [0.7]\n"
        "candidates:\n  - {name: c, model: openai/gpt-4o-mini}\n"
        "scenarios:\n"
        "  - name: s\n    prompt: Dose?\n    criteria: [Is accurate.]\n"
        "    at_temperature:\n      - {temperature: 1.5, criterion: Is careful.}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-c", "from qualspec.cli import main; main()", "run", str(suite),
         "--dry-run"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "QUALSPEC_HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        "warning: scenario 's': at_temperature 1.5 is not one of the run's temperatures "
        "(0.7); its criterion 'Is careful.' is never judged"
    ) in done.stdout
