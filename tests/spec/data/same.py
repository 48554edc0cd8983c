"""The same suite as same.yaml: both front ends must give identical work items."""

from qualspec.spec import AtTemperature, Candidate, Evaluation, JudgeConfig, Role, Scenario

ROLES = [
    Role(name="novice", preamble="I am new to this topic."),
    Role(
        name="expert",
        preamble="I am a domain expert.",
        system_prompt="The user is an expert; be precise.",
    ),
]

evaluation = Evaluation(
    name="Same suite",
    description="Checks that Python and YAML suites expand identically.",
    candidates=[
        Candidate(
            name="smol",
            model="local/smollm2",
            system_prompt="You are a careful assistant.",
            params={"max_tokens": 128, "seed": 7},
        ),
        Candidate(name="remote", model="openai/gpt-4o-mini"),
    ],
    roles=ROLES,
    scenarios=[
        Scenario(
            name="explain",
            prompt="Explain {{ topic }} to {{audience}}.",
            inputs="same_rows.csv",
            rubric="helpfulness",
            at_temperature=[
                AtTemperature(temperature=1.0, criterion="The explanation stays accurate.")
            ],
        ),
        Scenario(
            name="capital",
            prompt="What is the capital of France?",
            system_prompt="Answer in one sentence.",
            criteria=["Names Paris as the capital."],
            context="The answer is Paris.",
        ),
    ],
    temperatures="stability_test",
    runs_per_temperature=2,
    judge=JudgeConfig(model="local/smollm2", threshold=6),
)
