from qualspec.spec import Candidate

candidate = Candidate(name="smol", model="local/smollm2")
