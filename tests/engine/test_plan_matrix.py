"""Matrix expansion: sizes, order, prompts, system-prompt precedence, criteria, keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualspec.engine import Plan, call_key, expand
from qualspec.providers import Message
from qualspec.spec import (
    BUILTIN_RUBRICS,
    AtTemperature,
    Candidate,
    Evaluation,
    LoadedSuite,
    Role,
    Scenario,
    load_evaluation,
    load_suite,
)

DATA = Path(__file__).parents[1] / "spec" / "data"


def _seed_suite(*, temperatures: list[float] | None = None, runs: int = 1) -> LoadedSuite:
    """The seed's example: 5 candidates x 4 roles x 10 scenarios."""
    return load_evaluation(
        Evaluation(
            name="seed",
            candidates=[Candidate(name=f"c{i}", model=f"openai/model-{i}") for i in range(5)],
            roles=[Role(name=f"r{i}", preamble=f"I am persona {i}.") for i in range(4)],
            scenarios=[
                Scenario(name=f"s{i}", prompt=f"Question {i}?", criteria=["Answers.", "Is kind."])
                for i in range(10)
            ],
            temperatures=temperatures or [0.0],
            runs_per_temperature=runs,
        )
    )


def test_seed_matrix_is_200_calls() -> None:
    plan = expand(_seed_suite())
    assert isinstance(plan, Plan)
    assert len(plan.items) == 200
    assert plan.judge_calls == 400
    assert plan.n_inputs == 10
    assert plan.candidates == tuple(f"c{i}" for i in range(5))
    assert plan.roles == tuple(f"r{i}" for i in range(4))
    assert len({item.key for item in plan.items}) == 200


def test_with_five_temperatures_and_three_runs_it_is_3000() -> None:
    plan = expand(_seed_suite(temperatures=[0.0, 0.3, 0.7, 1.0, 1.5], runs=3))
    assert len(plan.items) == 3000
    assert plan.temperatures == (0.0, 0.3, 0.7, 1.0, 1.5)
    assert plan.runs == 3
    assert len({item.key for item in plan.items}) == 3000


def test_expansion_order_is_scenario_input_role_candidate_temperature_run() -> None:
    plan = expand(_seed_suite(), temperatures=[0.0, 1.0], runs=2)
    cells = [(i.scenario, i.role, i.candidate, i.temperature, i.run_index) for i in plan.items]
    assert cells[:5] == [
        ("s0", "r0", "c0", 0.0, 0),
        ("s0", "r0", "c0", 0.0, 1),
        ("s0", "r0", "c0", 1.0, 0),
        ("s0", "r0", "c0", 1.0, 1),
        ("s0", "r0", "c1", 0.0, 0),
    ]
    assert cells == sorted(cells, key=lambda c: (c[0], c[1], c[2], c[3], c[4]))


def test_filters_restrict_in_suite_order() -> None:
    plan = expand(_seed_suite(), candidates=["c3", "c1"], roles=["r2"], scenarios=["s9", "s0"])
    assert plan.candidates == ("c1", "c3")
    assert plan.roles == ("r2",)
    assert plan.scenarios == ("s0", "s9")
    assert len(plan.items) == 4
    assert {i.candidate for i in plan.items} == {"c1", "c3"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"candidates": ["c9x"]},
            "Unknown candidate 'c9x' in --candidates: valid candidates: c0, c1, c2, c3, c4",
        ),
        (
            {"roles": ["r22"]},
            "Unknown role 'r22' in --roles: did you mean 'r2'? valid roles: r0, r1, r2, r3",
        ),
        ({"scenarios": ["s10"]}, "Unknown scenario 's10' in --scenarios: did you mean 's1'?"),
        ({"runs": 0}, "--runs must be at least 1, got 0"),
        ({"temperatures": [2.5]}, "Temperature 2.5 is outside 0..2"),
        ({"temperatures": "hot"}, "Invalid temperatures 'hot'"),
        ({"model": "nomodel"}, "Model address 'nomodel' must be provider/model"),
    ],
)
def test_bad_filters_and_overrides_are_one_line_config_errors(
    kwargs: dict[str, object], message: str
) -> None:
    from qualspec.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        expand(_seed_suite(), **kwargs)  # type: ignore[arg-type]
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_overrides_temperatures_runs_and_model() -> None:
    plan = expand(_seed_suite(), temperatures="stability_test", runs=2, model="vllm/my-model")
    assert plan.temperatures == (0.0, 0.5, 1.0)
    assert len(plan.items) == 200 * 3 * 2
    assert {(i.provider, i.model) for i in plan.items} == {("vllm", "my-model")}
    assert expand(_seed_suite(), temperatures=[0.2, 0.2]).temperatures == (0.2,)


def _suite(**kwargs: object) -> LoadedSuite:
    fields: dict[str, object] = {
        "name": "x",
        "candidates": [Candidate(name="a", model="local/models/x.gguf")],
        "scenarios": [Scenario(name="s", prompt="Hi.", criteria=["c"])],
    }
    fields.update(kwargs)
    return load_evaluation(Evaluation.model_validate(fields))


def test_no_roles_runs_each_scenario_once_without_preamble() -> None:
    plan = expand(_suite(temperatures=[0.0, 0.7]))
    assert plan.roles == ()
    assert [(i.role, i.temperature) for i in plan.items] == [(None, 0.0), (None, 0.7)]
    item = plan.items[0]
    assert item.messages == (Message("user", "Hi."),)
    assert item.prompt_parts == {"scenario_prompt:s": "Hi."}
    assert (item.provider, item.model) == ("local", "models/x.gguf")


def test_key_is_call_key_of_what_is_sent() -> None:
    suite = _suite(
        candidates=[Candidate(name="a", model="openai/gpt-4o", params={"max_tokens": 50})]
    )
    item = expand(suite, temperatures=[0.7], runs=2).items[1]
    assert item.params == {"max_tokens": 50}
    assert "temperature" not in item.params
    expected = call_key(
        "openai", "gpt-4o", item.messages, {"max_tokens": 50, "temperature": 0.7}, 1
    )
    assert item.call_key == expected
    assert item.key != expected  # the cell key adds the names that place the call


def test_identical_candidates_share_the_call_but_not_the_cell() -> None:
    suite = _suite(
        candidates=[
            Candidate(name="a", model="openai/gpt-4o"),
            Candidate(name="b", model="openai/gpt-4o"),
        ]
    )
    first, second = expand(suite).items
    assert first.call_key == second.call_key
    assert first.key != second.key


@pytest.mark.parametrize(
    ("role_sp", "scenario_sp", "candidate_sp", "expected"),
    [
        ("role", "scenario", "candidate", "role"),
        (None, "scenario", "candidate", "scenario"),
        (None, None, "candidate", "candidate"),
        (None, None, None, None),
        ("role", None, "candidate", "role"),
    ],
)
def test_system_prompt_precedence(
    role_sp: str | None, scenario_sp: str | None, candidate_sp: str | None, expected: str | None
) -> None:
    suite = _suite(
        candidates=[Candidate(name="a", model="local/m", system_prompt=candidate_sp)],
        roles=[Role(name="r", preamble="I am r.", system_prompt=role_sp)],
        scenarios=[Scenario(name="s", prompt="Hi.", system_prompt=scenario_sp, criteria=["c"])],
    )
    (item,) = expand(suite).items
    user = Message("user", "I am r.\n\nHi.")
    if expected is None:
        assert item.messages == (user,)
        assert not any(name.startswith("system_prompt") for name in item.prompt_parts)
    else:
        assert item.messages == (Message("system", expected), user)
        source = {"role": "role:r", "scenario": "scenario:s", "candidate": "candidate:a"}
        assert item.prompt_parts[f"system_prompt:{source[expected]}"] == expected
    assert item.prompt_parts["preamble:r"] == "I am r."


def test_role_without_preamble_sends_the_prompt_alone() -> None:
    suite = _suite(roles=[Role(name="quiet", system_prompt="Be brief.")])
    (item,) = expand(suite).items
    assert item.messages == (Message("system", "Be brief."), Message("user", "Hi."))
    assert item.role == "quiet"


def test_criteria_scenario_then_rubric_then_at_temperature_deduplicated() -> None:
    helpfulness = BUILTIN_RUBRICS["helpfulness"].criteria
    suite = _suite(
        scenarios=[
            Scenario(
                name="s",
                prompt="Dose?",
                criteria=["Is accurate.", helpfulness[0]],
                rubric="helpfulness",
                context="Max 1200 mg/day OTC.",
                at_temperature=[
                    AtTemperature(temperature=0.0, criterion="Is conservative."),
                    AtTemperature(temperature=1.5, criterion="Does not hallucinate doses."),
                    AtTemperature(temperature=1.5, criterion="Is accurate."),
                ],
            )
        ],
        temperatures=[0.0, 0.7, 1.5],
    )
    plan = expand(suite)
    by_temp = {i.temperature: i.criteria for i in plan.items}
    base = ("Is accurate.", *helpfulness)
    assert by_temp[0.0] == (*base, "Is conservative.")
    assert by_temp[0.7] == base
    assert by_temp[1.5] == (*base, "Does not hallucinate doses.")
    assert all(i.context == "Max 1200 mg/day OTC." for i in plan.items)
    assert plan.judge_calls == sum(len(c) for c in by_temp.values())


def test_suite_rubric_overrides_builtin_of_same_name() -> None:
    from qualspec.spec import Rubric

    suite = _suite(
        rubrics=[Rubric(name="concise", criteria=["Under 20 words."])],
        scenarios=[Scenario(name="s", prompt="Hi.", rubric="concise")],
    )
    assert expand(suite).items[0].criteria == ("Under 20 words.",)


def test_inputs_rows_render_prompts_and_count(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text('{"id": "a", "x": "one"}\n{"x": "two"}\n')
    (tmp_path / "suite.yaml").write_text(
        "name: x\ncandidates: [{name: c, model: local/m}, {name: d, model: local/n}]\n"
        "roles: [{name: r, preamble: Hello.}]\n"
        "scenarios:\n"
        "  - {name: s, prompt: 'Say {{ x }}.', criteria: [c], inputs: rows.jsonl}\n"
        "  - {name: t, prompt: Plain., criteria: [c]}\n"
    )
    plan = expand(load_suite(tmp_path / "suite.yaml"))
    assert plan.n_inputs == 3
    assert [(i.scenario, i.input_id, i.candidate) for i in plan.items] == [
        ("s", "a", "c"),
        ("s", "a", "d"),
        ("s", "2", "c"),
        ("s", "2", "d"),
        ("t", None, "c"),
        ("t", None, "d"),
    ]
    assert plan.items[2].messages[-1].content == "Hello.\n\nSay two."
    assert plan.items[2].prompt_parts["scenario_prompt:s"] == "Say {{ x }}."


def test_python_and_yaml_suites_give_identical_keys() -> None:
    from_yaml = expand(load_suite(DATA / "same.yaml"))
    from_python = expand(load_suite(DATA / "same.py"))
    # (2 input rows + 1 plain scenario) x 2 roles x 2 candidates x 3 temperatures x 2 runs
    assert len(from_yaml.items) == 72
    assert [i.key for i in from_yaml.items] == [i.key for i in from_python.items]
    assert from_yaml.items == from_python.items
    assert from_yaml.judge_model == "local/smollm2" and from_yaml.threshold == 6
    expert_explain = next(
        i for i in from_yaml.items if i.role == "expert" and i.input_id == "tides"
    )
    assert expert_explain.messages == (
        Message("system", "The user is an expert; be precise."),
        Message("user", "I am a domain expert.\n\nExplain ocean tides to engineers."),
    )
    capital = next(i for i in from_yaml.items if i.scenario == "capital" and i.role == "novice")
    assert capital.messages[0] == Message("system", "Answer in one sentence.")
    assert capital.context == "The answer is Paris."


def test_estimated_tokens() -> None:
    suite = _suite(
        candidates=[Candidate(name="a", model="local/m", params={"max_tokens": 100})],
        scenarios=[Scenario(name="s", prompt="x" * 400, criteria=["c1", "c2"])],
        judge={"model": "local/j", "params": {"max_tokens": 50}},
    )
    plan = expand(suite)
    tokens_in, tokens_out = plan.estimated_tokens()
    assert tokens_out == 100 + 2 * 50
    # the candidate reads 100 tokens; each judge call reads at least prompt + answer
    assert tokens_in > 100 + 2 * (100 + 100)
    default = expand(_suite())
    assert default.estimated_tokens()[1] == 256 + 256


def test_a_small_plan_in_memory_is_built_once_and_walked_again() -> None:
    # a run walks its plan several times (checks, progress, metadata, the run): a small
    # plan whose rows are in memory is built on the first walk and read after
    plan = expand(_seed_suite())
    first = list(plan.items)
    again = list(plan.items)
    assert len(first) == 200 and first == again
    assert all(a is b for a, b in zip(first, again, strict=True))


def test_a_plan_over_an_inputs_file_is_built_afresh_on_every_walk(tmp_path: Path) -> None:
    (tmp_path / "rows.csv").write_text("id,q\na,x\nb,y\n", encoding="utf-8")
    path = tmp_path / "rows.yaml"
    path.write_text(
        "name: rows\n"
        "candidates: [{name: bot, model: openai/m}]\n"
        "scenarios: [{name: s, prompt: 'Say {{ q }}', inputs: rows.csv, criteria: [ok]}]\n",
        encoding="utf-8",
    )
    plan = expand(load_suite(path))
    first, again = list(plan.items), list(plan.items)
    assert first == again and not any(a is b for a, b in zip(first, again, strict=True))
