"""The summary of the HTML report: counts, pass rate, tokens, cost, cache, judge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.analysis import format_temperature

if TYPE_CHECKING:
    from qualspec.analysis import RunTotals, RunVerdicts
    from qualspec.providers import PriceTable
    from qualspec.store import RunRecord

__all__ = [
    "Fact",
    "cache_phrase",
    "calibration_lines",
    "fmt_money",
    "fmt_score",
    "plural",
    "saved_text",
    "summary_facts",
]


@dataclass(slots=True)
class Fact:
    """One summary line: a label, a value and an optional note (e.g. a split)."""

    label: str
    value: str
    note: str = ""


def fmt_score(x: float | None) -> str:
    """A score as ``8``, ``7.5`` or ``-`` (none)."""
    if x is None:
        return "-"
    return f"{x:.1f}".rstrip("0").rstrip(".") if x % 1 else f"{x:.0f}"


def fmt_money(x: float | None) -> str:
    """USD with four decimals; ``unknown`` when a price is unknown."""
    return "unknown" if x is None else f"${x:.4f}"


def plural(n: int, word: str) -> str:
    """``1 error``, ``2 errors``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def cache_phrase(t: RunTotals) -> str:
    """What came from the cache, as every report says it (the console's ``Calls:`` line,
    the HTML report's ``cache``): ``3 answers and 2 judgments from cache``, counted from
    the stored records (``run_totals``: the results file's ``cached_responses`` and
    ``cached_judgments``), or ``nothing from cache``."""
    if not t.cached_responses and not t.cached_judgments:
        return "nothing from cache"
    what = f"{plural(t.cached_responses, 'answer')} and {plural(t.cached_judgments, 'judgment')}"
    return f"{what} from cache"


def saved_text(run: RunRecord, prices: PriceTable | None) -> str:
    """What came from the cache (:func:`cache_phrase`) and what those calls would have
    cost at current prices."""
    from qualspec.analysis import run_totals

    phrase = cache_phrase(run_totals(run))
    cached_r = [r for r in run.responses if r.cached and r.error is None]
    cached_j = [j for j in run.judgments if j.cached and j.error is None and j.judge_model]
    if not cached_r and not cached_j:
        return phrase
    if prices is None:
        from qualspec.providers import PriceTable

        prices = PriceTable.load()
    total: float | None = 0.0
    calls = [(r.provider, r.model, r.input_tokens, r.output_tokens) for r in cached_r]
    for j in cached_j:
        provider, _, model = (j.judge_model or "").partition("/")
        calls.append((provider, model, j.input_tokens, j.output_tokens))
    for provider, model, tokens_in, tokens_out in calls:
        cost = prices.cost(provider, model, tokens_in, tokens_out)
        if cost is None or total is None:
            total = None
            continue
        total += cost
    value = (
        "saved an unknown amount (a model has no price)"
        if total is None
        else (f"saved {fmt_money(total)} at current prices")
    )
    return f"{phrase}: {value}"


def summary_facts(run: RunRecord, t: RunTotals, verdicts: RunVerdicts, saved: str) -> list[Fact]:
    meta = run.summary.metadata or {}
    facts = _count_facts(t, verdicts)
    facts.append(Fact("cache", saved))
    facts.extend(_judge_facts(meta))
    facts.extend(_temperature_facts(meta))
    return facts


def _count_facts(t: RunTotals, verdicts: RunVerdicts) -> list[Fact]:
    """The run's verdicts, answers, judgments, checks, tokens and cost."""
    n_pass, n_fail, _ = verdicts.count("cells")
    rate = f"{100 * n_pass / (n_pass + n_fail):.0f}%" if n_pass + n_fail else "-"
    rows_p, rows_f, rows_n = verdicts.count("rows")
    each = ", ".join(
        f"{name} {p} of {p + f}" for name, (p, f, _n) in verdicts.candidates.items() if p + f
    )
    facts = [
        Fact(
            "verdicts",
            f"{rows_p} of {plural(rows_p + rows_f, 'candidate line')} passed",
            (f"{each}; " if each else "")
            + (f"{rows_n} without a verdict; " if rows_n else "")
            + f"aggregation {verdicts.aggregation}",
        ),
        Fact(
            "pass rate",
            rate,
            f"{n_pass} of {plural(n_pass + n_fail, 'cell')} with a verdict passed",
        ),
        Fact(
            "answers",
            str(t.responses),
            ", ".join(
                x
                for x in (
                    f"{plural(t.errors, 'error')}" if t.errors else "",
                    f"{t.cached_responses} from cache" if t.cached_responses else "",
                )
                if x
            ),
        ),
    ]
    judgments = t.judgments - t.checks  # checks and comparisons have lines of their own
    if judgments:
        facts.append(
            Fact(
                "judgments",
                str(judgments),
                f"{t.passed - t.checks_passed} passed, {t.failed - t.checks_failed} failed, "
                f"{t.unscored} unscored; mean score {fmt_score(t.mean_score)}",
            )
        )
    if t.comparisons:
        facts.append(Fact("comparisons", str(t.comparisons), "groups judged side by side"))
    if t.checks:
        facts.append(
            Fact("checks", str(t.checks), f"{t.checks_passed} passed, {t.checks_failed} failed")
        )
    facts.append(
        Fact(
            "tokens",
            f"{t.candidate_input_tokens + t.judge_input_tokens} in / "
            f"{t.candidate_output_tokens + t.judge_output_tokens} out",
            f"candidates {t.candidate_input_tokens} in / {t.candidate_output_tokens} out; "
            f"judge {t.judge_input_tokens} in / {t.judge_output_tokens} out",
        )
    )
    facts.append(
        Fact(
            "cost",
            fmt_money(t.cost_usd),
            f"candidates {fmt_money(t.candidate_cost_usd)}, judge {fmt_money(t.judge_cost_usd)}"
            + ("; a model has no known price" if t.cost_usd is None else ""),
        )
    )
    return facts


def _judge_facts(meta: dict[str, Any]) -> list[Fact]:
    """The judge's model and threshold, or each field grader's in a reference-graded run."""
    facts: list[Fact] = []
    judge = meta.get("judge") if isinstance(meta.get("judge"), dict) else None
    found_evaluators = meta.get("evaluators")
    evaluators = [e for e in found_evaluators or () if isinstance(e, dict)]
    graders = [e for e in evaluators if e.get("type") == "field_grader"]
    if graders and len(graders) == len(evaluators):  # reference-graded: 0-100, not 0-10
        for grader in graders:
            limit = grader.get("threshold")
            facts.append(
                Fact(
                    "grader",
                    str(grader.get("model") or (judge or {}).get("model") or "-"),
                    f"pass at {fmt_score(limit)}/100" if isinstance(limit, int | float) else "",
                )
            )
        judge = None
    if judge and judge.get("model"):
        threshold = judge.get("threshold")
        facts.append(
            Fact(
                "judge",
                str(judge["model"]),
                f"pass at {fmt_score(threshold)}/10" if isinstance(threshold, int | float) else "",
            )
        )
    return facts


def _temperature_facts(meta: dict[str, Any]) -> list[Fact]:
    """The temperatures asked for and the runs at each."""
    facts: list[Fact] = []
    found = meta.get("dimensions")
    dims: dict[str, Any] = found if isinstance(found, dict) else {}
    temps = dims.get("temperatures")
    if isinstance(temps, list) and temps:
        runs = dims.get("runs")
        facts.append(
            Fact(
                "temperatures",
                ", ".join(format_temperature(x) for x in temps),
                f"{plural(runs, 'run')} per temperature" if isinstance(runs, int) else "",
            )
        )
    return facts


def calibration_lines(run: RunRecord) -> list[str]:
    found = (run.summary.metadata or {}).get("judge_calibration")
    if not isinstance(found, dict):
        return []
    return [
        m["verdict"]
        for m in found.values()
        if isinstance(m, dict) and isinstance(m.get("verdict"), str)
    ]
