"""The corpus's ``ambiguous`` answers: each must stay unscored."""

from __future__ import annotations

import json
import random

from qualspec.judges._corpus_clear import _OVERRIDE
from qualspec.judges._corpus_parts import Case, Maker, _dumps, _reasoning, _score

# --- ambiguous: must stay unscored --------------------------------------------------------


def _with_reasoning(rng: random.Random, line: str) -> str:
    if rng.random() < 0.5:
        return line
    return f"{_reasoning(rng)}\n{line}"


def _amb_line(rng: random.Random) -> Case:
    a = _score(rng, 10)
    b = a + 1
    values = (
        f"{a}-{b}",
        f"{a} - {b}",
        f"{a}–{b}",
        f"{a} to {b}",
        "0-10",
        "1-10",
        f"{a} or {b}",
        f"{a}/{b} or so",
        f"{a},5",
        f"{a},5/10",
        f"{a}.5",
        f"{a + 1}0%",
        f"{a}/5",
        f"{a}5/100",
        f"0.{a + 1}",
        "out of 10",
        "/10",
        f"{a}. On reflection, {b} would be fairer.",
        f"{a} (maybe {b})",
        f"{a} but could be {b}",
        "high",
        "N/A",
        "<n>",
        "<integer 0-10>",
        "11",
        "-1",
        "NaN",
        "",
    )
    keyword = rng.choice(("SCORE", "Score", "score", "**Score:**"))
    sep = "" if keyword.endswith(":**") else ":"
    return _with_reasoning(rng, f"{keyword}{sep} {rng.choice(values)}".rstrip()), None, None


def _amb_other_keyword(rng: random.Random) -> Case:
    n = _score(rng)
    forms = (
        f"Rating: {n}",
        "Rating: 1-10",
        f"Grade: {n}/10",
        f"Note: {n},5/10",
        f"Final score: {n}",
        f"Overall score: {n}/10",
        f"Score (0-10): {n}",
        f"score = {n}",
        f"The score is {n}.",
        f"I would give it a {n}.",
        f"{n}/10",
        f"I'd rate it {n} out of 10.",
        f"**{n}**",
        f"{n}",
        f"Verdict: {n}",
        f"Points: {n}",
    )
    return _with_reasoning(rng, rng.choice(forms)), None, None


def _amb_disagreeing(rng: random.Random) -> Case:
    a = _score(rng, 10)
    b = rng.choice([v for v in range(11) if v != a])
    why = _reasoning(rng)
    forms = (
        f"{why}\nSCORE: {a}\nSCORE: {b}",
        f"SCORE: {a}\n{why}\nScore: {b}/10",
        f'{{"score": {a}, "reasoning": {json.dumps(why)}}}\nSCORE: {b}',
        f'{{"score": {a}}} and later {{"score": {b}}}',
        f'First: {{"score": {a}}}\nRevised: {{"score": {b}, "reasoning": "second try"}}',
        f'{{"score": {a}, "reasoning": {json.dumps(why)}, "score": {b}}}',
        f'{{"score": {a}, "Score": {b}}}',
        f"SCORE: {a}\nOn reflection, {b} would be fairer.",
        f'{{"score": {a}, "reasoning": "ok"}}\nCorrection: make it a {b}.',
        f"Score: {a}\nActually, I'd rather give {b}.",
    )
    return rng.choice(forms), None, None


def _amb_json(rng: random.Random) -> Case:
    n = _score(rng, 10)
    why = _reasoning(rng)
    values: tuple[object, ...] = (
        n + 0.5,
        round(n / 10 + 0.05, 2) if n < 9 else 0.5,
        1.0,
        f"{n}-{n + 1}",
        f"{n} or {n + 1}",
        f"{n},5",
        f"{n}0%",
        f"{n}/5",
        f"{n}5/100",
        "high",
        "N/A",
        "",
        11,
        -1,
        100,
        True,
        False,
        None,
        [n],
        {"value": n},
    )
    obj = {"score": rng.choice(values), "reasoning": why}
    return _dumps(rng, obj), None, None


def _amb_no_score_key(rng: random.Random) -> Case:
    n = _score(rng)
    forms: tuple[dict[str, object], ...] = (
        {"reasoning": f"It passes {n} out of 10 tests."},
        {"reasoning": _reasoning(rng), "rating": n},
        {"verdict": "good", "explanation": f"I would give it {n}/10."},
        {"result": {"score": n, "reasoning": "nested"}},
        {"scores": {"accuracy": n}, "reasoning": "several"},
        {"points": n, "max": 10},
    )
    text = _dumps(rng, rng.choice(forms))
    if rng.random() < 0.3:
        text = f"My verdict:\n{text}"
    return text, None, None


def _amb_not_an_object(rng: random.Random) -> Case:
    n = _score(rng)
    forms = (str(n), f"[{n}]", f'[{{"score": {n}}}]', f'"{n}"', "true", "null", f"{n}.0")
    return rng.choice(forms), None, None


def _amb_cut_off(rng: random.Random) -> Case:
    n = _score(rng)
    forms = (
        f'{{"score": {n}',
        f'{{"reasoning": "{_reasoning(rng, 1)}',
        f'{{"reasoning": "ok", "score": {n}',
        f'{{"details": {{"score": {n}}}',
        '{"score": ',
    )
    return rng.choice(forms), None, None


def _amb_empty(rng: random.Random) -> Case:
    structured = rng.choice((None, {"foo": 1}, {"rating": 7}, "not json", [{"score": 7}]))
    return rng.choice(("", "   ", "\n\t", "No idea.", "I cannot judge this.")), structured, None


def _amb_labelled_disagree(rng: random.Random) -> Case:
    # Two verdicts that disagree, whatever their labels (issue 17: read as 6 and as 9).
    a = _score(rng)
    b = rng.choice([v for v in range(11) if v != a])
    why = _reasoning(rng)
    forms = (
        f"Score: {a}\n{why}\nOverall score: {b}",
        f"Final score: {a}\n{why}\nscore: {b}",
        f"SCORE: {a}\n**Final rating:** {b}/10",
        f"{why}\nTotal score: {a}\nSCORE: {b}",
        f'{{"score": {a}, "overall_score": {b}, "reasoning": {json.dumps(why)}}}',
        f'{{"score": {a}, "reasoning": {json.dumps(why)}}}\nFinal score: {b}',
        f"{why} SCORE: {a}\nOverall score: {b}",
    )
    return rng.choice(forms), None, None


def _amb_echoed_injection(rng: random.Random) -> Case:
    # The answer's verdict reported by the judge, and no verdict of the judge's own.
    why = _reasoning(rng, 1)
    forms = (
        f'The answer contains "SYSTEM OVERRIDE: {_OVERRIDE}", an injection attempt. {why}',
        f"The answer says: {_OVERRIDE}",
        f"The answer says:\n```json\n{_OVERRIDE}\n```\n{why}",
        f"The response ends with:\n{_OVERRIDE}",
        f"> {_OVERRIDE}\n{why}",
        f"The answer ends with:\nSCORE: 10\n{why}",
        f"{why} It asks for: SCORE: 10",
        f'It writes "SCORE: 10" at the end. {why}',
    )
    return rng.choice(forms), None, None


def _amb_template_echo(rng: random.Random) -> Case:
    # The prompt's reply template given back with a number in it.
    n = _score(rng)
    why = rng.choice(
        ("<why, in one sentence>", "<one sentence>", "<why, briefly>", "...", "<reasoning>")
    )
    obj = {"score": n, "reasoning": why}
    structured = obj if rng.random() < 0.3 else None
    return rng.choice((json.dumps(obj), f"Reply with only: {json.dumps(obj)}")), structured, None


_AMBIGUOUS: tuple[Maker, ...] = (
    _amb_line,
    _amb_line,
    _amb_other_keyword,
    _amb_disagreeing,
    _amb_json,
    _amb_no_score_key,
    _amb_not_an_object,
    _amb_cut_off,
    _amb_empty,
    _amb_labelled_disagree,
    _amb_echoed_injection,
    _amb_template_echo,
)
