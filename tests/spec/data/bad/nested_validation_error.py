from qualspec.spec import Candidate, Evaluation

evaluation = Evaluation(
    name="nested validation error",
    candidates=[Candidate(name="smol", model="local/smollm2")],
    scenarios=[
        {"name": "greet", "prompt": "Say hello.", "criteria": ["Says hello."]},
        {"name": "bye", "criteria": "Says bye.", "prompt": "Bye."},
    ],
    runs_per_temperature=0,
)
