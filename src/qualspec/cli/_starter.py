"""The starter suite ``qualspec init`` writes: the providers it offers, which of their API
keys the environment has (by variable name: a value is never read out), and the commented
YAML text for the providers chosen.

Plain functions on plain data (no I/O but reading which variables are set), so the command
module only asks, checks paths and writes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "LOCAL",
    "PROVIDERS",
    "Starter",
    "StarterProvider",
    "defaults",
    "detect_keys",
    "starter_suite",
]


@dataclass(frozen=True, slots=True)
class StarterProvider:
    """One provider ``qualspec init`` offers.

    Attributes:
        name: The provider's name (``--provider NAME``, the suite's ``provider/`` prefix).
        type: Its type in the suite's ``providers:`` section.
        key_env: The environment variable its API key is read from (None: no key).
        model: The candidate's (and, when it judges, the judge's) ``provider/model``.
        candidate: The candidate's name in reports.
        max_tokens: The candidate's answer length limit.
        note: The comment beside its model in the suite.
    """

    name: str
    type: str
    key_env: str | None
    model: str
    candidate: str
    max_tokens: int
    note: str


PROVIDERS: tuple[StarterProvider, ...] = (
    StarterProvider(
        name="openai",
        type="openai",
        key_env="OPENAI_API_KEY",
        model="openai/gpt-4o-mini",
        candidate="gpt_4o_mini",
        max_tokens=300,
        note="any model your key serves (OPENAI_BASE_URL: another OpenAI-compatible server)",
    ),
    StarterProvider(
        name="anthropic",
        type="anthropic",
        key_env="ANTHROPIC_API_KEY",
        model="anthropic/claude-3-5-haiku-latest",
        candidate="claude_haiku",
        max_tokens=300,
        note="any Claude model your key serves",
    ),
    StarterProvider(
        name="openrouter",
        type="openai",
        key_env="OPENROUTER_API_KEY",
        model="openrouter/openai/gpt-4o-mini",
        candidate="openrouter_gpt_4o_mini",
        max_tokens=300,
        note="openrouter/VENDOR/MODEL: any model OpenRouter serves",
    ),
    StarterProvider(
        name="local",
        type="local",
        key_env=None,
        model="local/smollm2",
        candidate="smollm2",
        max_tokens=96,
        note="the embedded model: in-process, no API key, no download",
    ),
)
"""What ``qualspec init`` offers, in the order it lists and writes them."""

LOCAL = "local"
_BY_NAME = {p.name: p for p in PROVIDERS}


def detect_keys(environ: Mapping[str, str] | None = None) -> list[str]:
    """The providers whose API key variable is set (non-blank) in ``environ``
    (default ``os.environ``), in :data:`PROVIDERS` order. Only whether a variable is set
    is looked at; its value is neither kept nor returned."""
    env = os.environ if environ is None else environ
    return [p.name for p in PROVIDERS if p.key_env and env.get(p.key_env, "").strip()]


def defaults(found: Sequence[str]) -> list[str]:
    """The providers taken without asking: those with a key, else the embedded model."""
    return list(found) or [LOCAL]


@dataclass(frozen=True, slots=True)
class Starter:
    """A starter suite: its YAML text and what it holds (for the summary line)."""

    text: str
    candidates: tuple[str, ...]
    judge: str
    key_vars: tuple[str, ...]
    answers: int


_SCENARIOS = """\
scenarios:
  - name: capital_city
    prompt: "What is the capital of France?"
    criteria:                     # statements the judge scores 0-10
      - "names Paris as the capital"
    expect:                       # checks without a model call: each passes or fails
      - icontains: paris
      - max_words: 60
  - name: sky_colour
    prompt: "In two sentences, why is the sky blue?"
    criteria:
      - "says that air scatters blue light more than the other colours"
      - "answers in at most two sentences"
"""
_N_SCENARIOS = 2  # x 1 temperature x 1 run: the answers per candidate
# short answers: cheap, quick on the embedded model, and SmolLM2 names Paris with it
_SYSTEM_PROMPT = '"You are a concise assistant. Answer in at most two sentences."'
_COMMENT_AT = 35  # the column of the comments beside the suite's lines


def starter_suite(chosen: Sequence[str], filename: str) -> Starter:
    """The commented starter suite for the ``chosen`` provider names (known ones, at least
    one), run as ``qualspec run FILENAME``.

    The judge is the first chosen provider with an API (the embedded model judges only
    when it is the only one), scoring all of an answer's criteria in one call.
    """
    picked = [_BY_NAME[name] for name in dict.fromkeys(chosen)]
    remote = [p for p in picked if p.key_env]
    judge = remote[0].model if remote else _BY_NAME[LOCAL].model
    lines = [
        "# A starter suite written by `qualspec init`: edit it to test what matters to you.",
        f"#   qualspec run --dry-run {filename}   # what would run, without a model call",
        f"#   qualspec run {filename}             # the answers, the judge's scores, a report",
        "# Every candidate answers every scenario at every temperature; the judge scores each",
        "# answer against its scenario's criteria (0-10), and expect: checks test it without a",
        "# model call. The format: README.md, section Suites; `qualspec schema` prints it as",
        "# a JSON Schema.",
        "name: Starter",
        "description: Written by qualspec init.",
        "",
    ]
    if remote:
        lines.append("providers:                        # API keys: read from these variables")
        lines += [f"  {p.name}: {{type: {p.type}, api_key_env: {p.key_env}}}" for p in remote]
        lines.append("")
    lines.append("candidates:                       # the models under test, as provider/model")
    for p in picked:
        lines += [
            f"  - name: {p.candidate}",
            f"    model: {p.model}".ljust(_COMMENT_AT - 1) + f" # {p.note}",
            f"    params: {{max_tokens: {p.max_tokens}}}",
            f"    system_prompt: {_SYSTEM_PROMPT}",
        ]
    lines += [
        "",
        "# roles:                          # optional personas: each scenario is asked per role",
        "#   - name: busy_engineer",
        '#     preamble: "I\'m an engineer in a hurry; keep it short."',
        '#     system_prompt: "You are a concise assistant."',
        "",
        _SCENARIOS,
        "temperatures: [0.0]               # more (e.g. [0.0, 0.7]) show how answers vary",
        "runs_per_temperature: 1           # more runs per temperature measure stability",
        "",
        "judge:",
        f"  model: {judge}",
        "  threshold: 7                    # a criterion passes at this score or above",
        "  mode: all_criteria              # one judge call scores all of an answer's criteria",
    ]
    if not remote:
        lines += [
            "  calibrate: 0                    # no calibration calls before the run; measure",
            "                                  # the judge once: qualspec judge-check --judge "
            + judge,
            "# SmolLM2 (135M parameters) is a weak judge: its scores show how a run works. For",
            "# verdicts to trust, judge with a model behind an API (qualspec init --provider",
            "# openai, or judge: {model: openai/gpt-4o-mini} with OPENAI_API_KEY set).",
        ]
    return Starter(
        text="\n".join(lines) + "\n",
        candidates=tuple(p.model for p in picked),
        judge=judge,
        key_vars=tuple(p.key_env for p in remote if p.key_env),
        answers=len(picked) * _N_SCENARIOS,
    )
