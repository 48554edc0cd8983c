"""The console's "Comparisons" block of a scenario: per comparison, the wins per member
(of how many groups judged), ties, mean scores, unscored and skipped groups, and how often
the two orders disagreed (with ``debias``). Each group's winner, scores and reason are
listed only with ``verbose`` (``qualspec run -v``): a large run has thousands of groups.
The HTML report and the web app always list them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from qualspec.messages import one_line

if TYPE_CHECKING:
    from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord

__all__ = ["comparison_blocks"]

Part = str | tuple[str, str]
_MAX_REASON_CHARS = 160


def _score(value: float) -> str:
    return f"{value:.1f}" if value % 1 else f"{value:.0f}"


def _where(details: dict[str, Any], temps: bool, runs: bool) -> str:
    group = details.get("group") or {}
    held, value = next(iter(group.items()), ("role", None))
    # a suite without roles compares its candidates per scenario: no role to name
    parts = [f"{held} {value}"] if value is not None else []
    if details.get("input_id") is not None:
        parts.append(f"input {details['input_id']}")
    if temps:
        temperature = details.get("temperature")
        parts.append("@default" if temperature is None else f"@{temperature:g}")
    if runs:
        parts.append(f"run {int(details.get('run_index') or 0) + 1}")
    return " ".join(parts) or "all answers"


def _group_lines(
    j: JudgmentRecord, indent: str, temps: bool, runs: bool, rank: Callable[[str], Any]
) -> list[list[Part]]:
    details = j.details or {}
    members: dict[str, str] = details.get("members") or {}
    where = _where(details, temps, runs)
    if j.error is not None:
        return [[f"{indent}{where}: ", (f"error: {one_line(j.error, _MAX_REASON_CHARS)}", "red")]]
    if not j.scores:
        reason = one_line(j.unscored_reason or "no verdict", _MAX_REASON_CHARS)
        return [[f"{indent}{where}: ", (f"unscored ({reason})", "yellow")]]
    winner = details.get("winner")
    shown = "tie" if winner == "tie" else members.get(str(winner), str(winner))
    scores = ", ".join(
        f"{members.get(key, key)} {_score(s)}"
        for key, s in sorted(
            j.scores.items(), key=lambda kv: (-(kv[1] or 0), rank(members.get(kv[0], kv[0])))
        )
        if s is not None
    )
    lines: list[list[Part]] = [
        [f"{indent}{where}: winner ", (shown, "bold green"), f"  ({scores})"]
    ]
    debias = details.get("debias")
    if isinstance(debias, dict) and debias.get("disagreed"):
        lines[0].append((" orders disagreed", "yellow"))
    if j.reasoning:
        labels: dict[str, str] = details.get("labels") or {}
        legend = ", ".join(f"{label} = {members.get(key, key)}" for label, key in labels.items())
        lines.append(
            [
                f"{indent}  ",
                (f'"{one_line(j.reasoning, _MAX_REASON_CHARS)}"', "dim"),
                f" ({legend})",
            ]
        )
    return lines


def _group_order(j: JudgmentRecord, rank: Callable[[str], tuple[int, str]]) -> tuple[Any, ...]:
    details = j.details or {}
    group = details.get("group") or {}
    held = next(iter(group.values()), None)
    temperature = details.get("temperature")
    return (
        str(details.get("input_id") or ""),
        rank(str(held)),
        -1.0 if temperature is None else float(temperature),
        int(details.get("run_index") or 0),
    )


def comparison_blocks(run: RunRecord, *, verbose: bool = False) -> dict[str, list[list[Part]]]:
    """Scenario -> the lines of its Comparisons block (scenarios without one are left out).

    Each line is a list of plain strings and ``(text, style)`` pairs; ``verbose`` adds two
    lines per group (its winner and scores, the judge's reason).
    """
    from qualspec.judges import comparison_records

    found = comparison_records(run)
    if not found and not _configured(run):
        return {}
    temps = len({(j.details or {}).get("temperature") for j in found}) > 1
    runs = any((j.details or {}).get("run_index") for j in found)
    by_scenario: dict[str, list[JudgmentRecord]] = {}
    for j in found:
        by_scenario.setdefault(str((j.details or {}).get("scenario")), []).append(j)
    responses: dict[str, list[ResponseRecord]] = {}
    for r in run.responses:
        responses.setdefault(r.scenario, []).append(r)
    out: dict[str, list[list[Part]]] = {}
    for scenario in dict.fromkeys([*responses, *by_scenario]):
        lines = _block(
            run,
            by_scenario.get(scenario, []),
            responses.get(scenario, []),
            temps=temps,
            runs=runs,
            verbose=verbose,
        )
        if lines:
            out[scenario] = lines
    return out


def _configured(run: RunRecord) -> bool:
    evaluators = run.summary.metadata.get("evaluators") if run.summary.metadata else None
    return isinstance(evaluators, list) and any(
        isinstance(e, dict) and e.get("type") == "comparative" for e in evaluators
    )


def _block(
    run: RunRecord,
    records: list[JudgmentRecord],
    responses: list[ResponseRecord],
    *,
    temps: bool = False,
    runs: bool = False,
    verbose: bool = False,
) -> list[list[Part]]:
    from qualspec.judges import comparison_summary, dimension_rank

    scoped = dataclasses.replace(
        run,
        responses=responses,
        judgments=records,
        superseded_responses=[],
        superseded_judgments=[],
    )
    summaries = [s for s in comparison_summary(scoped) if s.groups or s.skipped]
    if not summaries:
        return []
    out: list[list[Part]] = [["  ", ("Comparisons:", "bold")]]
    for summary in summaries:
        rank = dimension_rank(run, summary.within)
        member_rank = dimension_rank(run, summary.compare)
        mine = sorted(
            (j for j in records if j.evaluator == summary.name),
            key=lambda j: _group_order(j, rank),
        )
        out.append(
            ["    ", (summary.name, "bold"), f" ({summary.compare} within {summary.within})"]
        )
        if verbose:
            for j in mine:
                out.extend(_group_lines(j, "      ", temps, runs, member_rank))
        ranked = sorted(summary.wins.items(), key=lambda kv: -kv[1])  # ties: suite order
        wins = ", ".join(f"{member} {n}" for member, n in ranked)
        ties = f"; {summary.ties} tied" if summary.ties else ""
        out.append([f"      wins: {wins or '-'}{ties} (of {summary.scored} judged)"])
        if summary.mean_scores:
            means = ", ".join(
                f"{member} {_score(round(score, 1))}"
                for member, score in sorted(summary.mean_scores.items(), key=lambda kv: -kv[1])
            )
            out.append([f"      mean scores: {means} (n {summary.scored})"])
        if summary.unscored or summary.errors:
            out.append(
                [
                    "      ",
                    (
                        f"{summary.unscored + summary.errors} of {summary.groups} groups unscored",
                        "yellow",
                    ),
                ]
            )
        if summary.skipped:
            out.append([f"      {summary.skipped} group(s) of fewer than 2 answers skipped"])
        if summary.debias:
            out.append(
                [f"      orders disagreed in {summary.disagreed} of {summary.debiased} groups"]
            )
        if not verbose and mine:
            out.append(
                [
                    (
                        f"      each group's winner and reason ({_plural(len(mine), 'group')}): "
                        "--verbose, or the HTML report",
                        "dim",
                    )
                ]
            )
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
