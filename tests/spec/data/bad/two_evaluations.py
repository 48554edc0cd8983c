from qualspec.spec import Candidate, Evaluation, Scenario

_common = {
    "candidates": [Candidate(name="smol", model="local/smollm2")],
    "scenarios": [Scenario(name="s", prompt="Hi.", criteria=["Greets back."])],
}
first = Evaluation(name="first", **_common)
second = Evaluation(name="second", **_common)
