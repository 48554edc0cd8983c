# ruff: noqa: F401, F821 - the misspelt name is what this broken suite tests
from qualspec.spec import Candidate, Evaluation, Scenario

evaluation = Evaluation(
    name="name error",
    candidates=[Candidate(name="smol", model="local/smollm2")],
    scenarios=[Scenaro(name="greet", prompt="Hi.", criteria=["Greets back."])],
)
