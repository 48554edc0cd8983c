"""A reference-graded run written straight to a store for the review page's tests: its
suite is a YAML file with an input row (``acme``), the reference answer and two candidate
answers of that input are stored with their prompt parts (by version), as the engine
stores them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from qualspec.spec import load_suite
from qualspec.store import ResponseRecord, Store

SYSTEM = "You extract facts. Answer with a JSON object only."
PROMPT = "Extract a profile of this company as JSON.\nCompany: {{ description }}"
DESCRIPTION = "Acme Corp builds anvils in Phoenix since 1947."
CALL_KEY = "ck-review-acme-0123456789"
REFERENCE = '{"name": "Acme Corp", "industry": "retail", "founded_year": 1947, "tags": ["anvils"]}'
CANDIDATE = '```json\n{"name": "Acme Corp", "industry": "manufacturing", "founded_year": 1948}\n```'

SUITE = f"""\
name: Profiles
candidates:
  - name: small
    model: openai/small
scenarios:
  - name: profile
    system_prompt: "{SYSTEM}"
    prompt: |-
      Extract a profile of this company as JSON.
      Company: {{{{ description }}}}
    inputs:
      - {{id: acme, description: "{DESCRIPTION}"}}
    reference: {{model: openai/big}}
    output_schema:
      fields:
        - {{name: name, critical: true}}
        - {{name: industry}}
        - {{name: founded_year, type: integer}}
judge: openai/judge
"""


def seed_review_run(db: str, folder: Path) -> tuple[str, Path]:
    """Write the suite file under ``folder`` and the run; returns (run id, suite path)."""
    path = folder / "profiles.yaml"
    path.write_text(SUITE, encoding="utf-8")
    suite = load_suite(path)
    when = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    schema = {"fields": [{"name": "name", "critical": True}, {"name": "industry"}]}
    meta = {"suite_path": str(path), "output_schemas": {"profile": schema}}
    with Store.open(db) as store:
        run_id = store.create_run("Profiles", suite.content_hash, meta)
        parts = [("system_prompt:scenario:profile", SYSTEM), ("scenario_prompt:profile", PROMPT)]
        ids = dict(zip([p[0] for p in parts], store.prompt_versions_many(parts), strict=True))

        def answer(kind: str, candidate: str, text: str, run_index: int = 0) -> ResponseRecord:
            return ResponseRecord(
                key=f"{kind}-{candidate}-{run_index}",
                kind=kind,
                candidate=candidate,
                role=None,
                scenario="profile",
                input_id="acme",
                temperature=0.0,
                effective_temperature=0.0,
                run_index=run_index,
                provider="fake",
                model="big" if kind == "reference" else candidate,
                text=text,
                finish_reason="stop",
                prompt_versions=dict(ids),
                call_key=CALL_KEY if kind == "reference" else f"ck-{candidate}-{run_index}",
                created_at=when,
            )

        store.record_responses(
            run_id,
            [
                answer("reference", "reference", REFERENCE),
                answer("candidate", "small", CANDIDATE),
                answer("candidate", "small", REFERENCE, run_index=1),
            ],
        )
        store.finish_run(run_id, "finished")
    return run_id, path
