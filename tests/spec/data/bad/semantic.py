from qualspec.spec import Candidate, Evaluation, Role, Scenario

SCENARIOS = [
    Scenario(name="greet", prompt="Hi.", criteria=["Greets back."]),
    Scenario(name="disclose", prompt="Evaluate this.", rubric="evidence_completness"),
]

evaluation = Evaluation(
    name="semantic problems",
    candidates=[Candidate(name="gpt", model="gpt-4o")],
    roles=[Role(name="a"), Role(name="a")],
    scenarios=SCENARIOS,
    temperatures="hot",
)
