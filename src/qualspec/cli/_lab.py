"""``qualspec lab`` (iterative answer refinement) and ``qualspec serve`` (the web app)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

__all__ = ["cmd_lab", "cmd_serve"]


def cmd_lab(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Refine an answer until it meets the criteria; print each iteration and the best one."""
    from qualspec.lab import IterationData, generate_answer

    def show(iteration: IterationData) -> None:
        if ns.json:
            return
        e = iteration.evaluation
        if iteration.error is not None:
            verdict = f"error: {iteration.error}"
        elif e is None:
            verdict = f"unscored: {iteration.unscored_reason}"
        else:
            verdict = f"score {e.score:.2f} ({'meets' if e.meets_criteria else 'does not meet'})"
        print(f"iteration {iteration.iteration_number}: {verdict}", file=sys.stderr, flush=True)

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


def cmd_serve(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Serve the web app until interrupted."""
    from qualspec.web import serve

    serve(host=ns.host, port=ns.port, token=ns.token, db=ns.db)
    return 0
