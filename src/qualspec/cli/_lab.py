"""``qualspec lab`` (iterative answer refinement) and ``qualspec serve`` (the web app)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from qualspec.cli._args import Commands, add_db, non_negative_int, number, positive_int, whole

__all__ = ["add_lab_parser", "add_serve_parser", "cmd_lab", "cmd_serve", "lab_terms"]


def lab_terms(text: str) -> str:
    """An error of the Lab's calls said in ``qualspec lab``'s terms: the Lab has no suite,
    so what to set is a flag (``--model``, ``--judge``) or an environment variable, never
    a suite's ``providers:`` section."""
    from qualspec.lab import BASE_URL_ENV, provider_named, reworded

    name = provider_named(text) or "?"
    env = BASE_URL_ENV.get(name)
    return reworded(
        text,
        name=name,
        choose=": name one of them with --model or --judge, as PROVIDER/MODEL (an "
        "OpenAI-compatible server: openai/MODEL with OPENAI_BASE_URL set to its address)",
        choose_key=" with --model/--judge",
        address_fix=f"set {env} to its address" if env else "use a provider whose address is set",
        where="flags (--model, --judge)",
    )


def _unit(text: str) -> float:
    value = number(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a score from 0 to 1, got {value:g}")
    return value


def _iterations(text: str) -> int:
    value = whole(text, 1)
    if value > 10:
        raise argparse.ArgumentTypeError(f"expected 1 to 10 iterations, got {value}")
    return value


def add_lab_parser(commands: Commands) -> None:
    """``qualspec lab INSTRUCTION --format ... --criteria ...``."""
    lab = commands.add_parser(
        "lab", help="refine an answer: generate, evaluate (0-1), feed back, keep the best"
    )
    lab.add_argument("instruct", metavar="INSTRUCTION", help="the question or task")
    lab.add_argument("--format", required=True, help="the form the answer must take")
    lab.add_argument("--criteria", required=True, help="what the evaluator checks")
    lab.add_argument(
        "--iter-max", type=_iterations, default=3, metavar="N", help="at most N rounds (1-10)"
    )
    lab.add_argument(
        "--threshold", type=_unit, default=0.8, help="score (0-1) that accepts an answer"
    )
    lab.add_argument("--model", metavar="PROVIDER/MODEL", help="writer (default local/smollm2)")
    lab.add_argument("--judge", metavar="PROVIDER/MODEL", help="evaluator (default: --model)")
    lab.add_argument(
        "--max-tokens", type=positive_int, metavar="N", help="the writer's answer length limit"
    )
    lab.add_argument("--json", action="store_true", help="print the whole result as JSON")
    add_db(lab)
    lab.set_defaults(handler=cmd_lab)


def cmd_lab(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Refine an answer until it meets the criteria; print each iteration and the best one."""
    import json

    from qualspec.errors import QualspecError
    from qualspec.lab import IterationData, generate_answer

    def show(iteration: IterationData) -> None:
        if ns.json:
            return
        e = iteration.evaluation
        if iteration.error is not None:
            verdict = f"error: {lab_terms(iteration.error)}"
        elif e is None:
            verdict = f"unscored: {iteration.unscored_reason}"
        else:
            verdict = f"score {e.score:.2f} ({'meets' if e.meets_criteria else 'does not meet'})"
        print(f"iteration {iteration.iteration_number}: {verdict}", file=sys.stderr, flush=True)

    try:
        result = generate_answer(
            ns.instruct,
            ns.format,
            ns.criteria,
            iter_max=ns.iter_max,
            score_threshold=ns.threshold,
            model=ns.model,
            judge_model=ns.judge,
            db=ns.db,
            max_tokens=ns.max_tokens,
            on_iteration=show,
        )
    except QualspecError as exc:  # said in the Lab's terms (its flags), then reported
        if exc.args and isinstance(exc.args[0], str):
            exc.args = (lab_terms(exc.args[0]), *exc.args[1:])
        raise
    if ns.json:
        sys.stdout.write(json.dumps(result.model_dump(), indent=2) + "\n")
        return 0 if result.success else 1
    best = result.metadata.get("best_iteration")
    score = "unscored" if result.final_score is None else f"{result.final_score:.2f}"
    state = "met the threshold" if result.success else "did not meet the threshold"
    cost = result.metadata.get("cost_usd")
    tokens = (
        f"{result.metadata['input_tokens']} + {result.metadata['output_tokens']} tokens, "
        f"{'unknown cost' if cost is None else f'${cost:.4f}'}; run {result.metadata['run_id']}"
    )
    if best is None:  # no iteration has a score: there is no best one to name
        tried = result.total_iterations
        print(
            f"no iteration was scored ({tried} tried): {state} {ns.threshold:g}; {tokens}"
            + ("; the last answer written:" if result.final_answer else "")
        )
    else:
        print(
            f"best answer: iteration {best} of {result.total_iterations}, score {score} "
            f"({state} {ns.threshold:g}); {tokens}"
        )
    print(result.final_answer)
    return 0 if result.success else 1


def add_serve_parser(commands: Commands) -> None:
    """``qualspec serve``."""
    serve = commands.add_parser("serve", help="the web app: runs, run detail, diff, the Lab")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=non_negative_int, default=8000, help="default 8000")
    serve.add_argument(
        "--token",
        help="require this token on every route (default $QUALSPEC_WEB_TOKEN); needed to "
        "bind anything but 127.0.0.1",
    )
    add_db(serve)
    serve.set_defaults(handler=cmd_serve)


def cmd_serve(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Serve the web app until interrupted."""
    from qualspec.web import serve

    serve(host=ns.host, port=ns.port, token=ns.token, db=ns.db)
    return 0
