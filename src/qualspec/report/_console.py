"""Console report (rich): scenario -> role -> candidate, then Candidate(role) x Temperature."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from qualspec.analysis import CellKey, CellScore
    from qualspec.store._records import RunRecord

__all__ = ["render_run"]


def _fmt_score(score: float | None) -> str:
    if score is None:
        return "  -  "
    return f"{score:4.1f}/10" if score % 1 else f"{score:2.0f}/10"


def _temp_label(requested: float, effective: set[float]) -> str:
    label = f"{requested:g}"
    others = sorted(e for e in effective if e != requested)
    if others:
        label += " (eff " + ", ".join(f"{e:g}" for e in others) + ")"
    return label


def render_run(run: RunRecord, console: Console, *, show_responses: bool = False) -> None:
    """Print the nested report, temperature tables and totals for ``run``."""
    from rich.table import Table

    from qualspec.analysis import cell_scores

    cells = cell_scores(run)
    summary = run.summary
    console.print(
        f"[bold]{summary.suite_name}[/bold]  run [cyan]{summary.id}[/cyan]  ({summary.status})"
    )
    effective: dict[tuple[str, float], set[float]] = defaultdict(set)
    for r in run.responses:
        if r.effective_temperature is not None:
            effective[(r.candidate, r.temperature)].add(r.effective_temperature)

    by_scenario: dict[str, list[tuple[CellKey, CellScore]]] = defaultdict(list)
    for key, cell in cells.items():
        by_scenario[key[0]].append((key, cell))
    temps = sorted({key[4] for key in cells})
    texts = {(r.scenario, r.input_id, r.role, r.candidate, r.temperature): r for r in run.responses}

    for scenario, entries in by_scenario.items():
        console.print()
        console.print(f"[bold]SCENARIO:[/bold] {scenario}")
        inputs = sorted({key[1] for key, _ in entries}, key=lambda v: (v is None, str(v)))
        for input_id in inputs:
            indent = "  "
            if input_id is not None:
                console.print(f"  [bold]INPUT:[/bold] {input_id}")
                indent = "    "
            rows = [(k, c) for k, c in entries if k[1] == input_id]
            roles = list(dict.fromkeys(k[2] for k, _ in rows))
            for role in roles:
                console.print(f"{indent}[bold]ROLE:[/bold] {role or '(none)'}")
                merged = _merge_temperatures([(k, c) for k, c in rows if k[2] == role])
                width = max(len(c) for c in merged)
                for candidate, (mean, passed, n_unscored, n_errors, n_runs) in merged.items():
                    verdict = _merged_verdict(mean, passed, n_errors, n_runs)
                    notes = []
                    if n_unscored:
                        notes.append(f"{n_unscored} unscored")
                    if n_errors:
                        notes.append(f"{n_errors} of {n_runs} errors")
                    note = f"  ({', '.join(notes)})" if notes else ""
                    console.print(
                        f"{indent}  - {candidate + ':':<{width + 1}} {verdict} "
                        f"{_fmt_score(mean)}{note}"
                    )
                    if show_responses:
                        for t in temps:
                            rec = texts.get((scenario, input_id, role, candidate, t))
                            if rec is not None:
                                body = rec.text if rec.error is None else f"ERROR {rec.error}"
                                console.print(f"{indent}      [dim]@{t:g}: {body}[/dim]")
            if len(temps) > 1:
                table = Table(title=f"{scenario}" + (f" / {input_id}" if input_id else ""))
                table.add_column("Candidate (role)")
                for t in temps:
                    eff: set[float] = set()
                    for (_cand, temp), values in effective.items():
                        if temp == t:
                            eff |= values
                    table.add_column(f"Temp {_temp_label(t, eff)}", justify="right")
                for role in roles:
                    cands = list(dict.fromkeys(k[3] for k, _ in rows if k[2] == role))
                    for cand in cands:
                        label = f"{cand} ({role})" if role else cand
                        row = [label]
                        for t in temps:
                            found = cells.get((scenario, input_id, role, cand, t))
                            row.append("" if found is None else _cell_text(found))
                        table.add_row(*row)
                console.print(table)
    _render_totals(run, console)


def _cell_text(cell: CellScore) -> str:
    if cell.mean is None:
        return "error" if cell.n_errors else "unscored"
    text = _fmt_score(cell.mean).strip()
    return text if cell.passed else f"[red]{text}[/red]"


def _merge_temperatures(
    rows: list[tuple[CellKey, CellScore]],
) -> dict[str, tuple[float | None, bool | None, int, int, int]]:
    """Per candidate: mean over temperatures of the cell means, and counts."""
    acc: dict[str, list[CellScore]] = defaultdict(list)
    for key, cell in rows:
        acc[key[3]].append(cell)
    out: dict[str, tuple[float | None, bool | None, int, int, int]] = {}
    for cand, cs in acc.items():
        means = [c.mean for c in cs if c.mean is not None]
        mean = sum(means) / len(means) if means else None
        verdicts = [c.passed for c in cs if c.passed is not None]
        passed = all(verdicts) if verdicts else None
        out[cand] = (
            mean,
            passed,
            sum(c.n_unscored for c in cs),
            sum(c.n_errors for c in cs),
            sum(c.n_runs for c in cs),
        )
    return out


def _merged_verdict(mean: float | None, passed: bool | None, n_errors: int, n_runs: int) -> str:
    if mean is None:
        return "[red][ERROR][/red]" if n_errors >= n_runs else "[yellow][UNSCORED][/yellow]"
    return "[green][PASS][/green]" if passed else "[red][FAIL][/red]"


def _render_totals(run: RunRecord, console: Console) -> None:
    from qualspec.analysis import run_totals

    t = run_totals(run)
    console.print()
    unscored = f", {t.unscored} of {t.judgments} unscored" if t.unscored else ""
    errors = f" ({t.errors} errors)" if t.errors else ""
    cached = f", {t.cached_responses} from cache" if t.cached_responses else ""
    console.print(f"[bold]Responses:[/bold] {t.responses}{errors}{cached}")
    if t.judgments:
        mean = "-" if t.mean_score is None else f"{t.mean_score:.2f}"
        console.print(
            f"[bold]Judgments:[/bold] {t.judgments}: {t.passed} passed, "
            f"{t.failed} failed{unscored}; mean score {mean}"
        )
    tokens_in = t.candidate_input_tokens + t.judge_input_tokens
    tokens_out = t.candidate_output_tokens + t.judge_output_tokens
    console.print(
        f"[bold]Tokens:[/bold] {tokens_in} in / {tokens_out} out   "
        f"[bold]Cost:[/bold] ${t.cost_usd:.4f} (candidates ${t.candidate_cost_usd:.4f}, "
        f"judge ${t.judge_cost_usd:.4f})"
    )
