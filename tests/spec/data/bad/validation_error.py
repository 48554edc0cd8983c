from qualspec.spec import Candidate, Evaluation, Scenario

evaluation = Evaluation(
    name="validation error",
    candidates=[Candidate(name="smol", model="local/smollm2")],
    scenarios=[
        Scenario(name="greet", promt="Say hello.", criteria=["Says hello."]),
    ],
)
