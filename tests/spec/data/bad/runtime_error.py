from qualspec.spec import Candidate, Evaluation, Scenario

SETTINGS = {"model": "local/smollm2"}


def candidates():
    return [Candidate(name="smol", model=SETTINGS["modle"])]


evaluation = Evaluation(
    name="runtime error",
    candidates=candidates(),
    scenarios=[Scenario(name="s", prompt="Hi.", criteria=["Greets back."])],
)
