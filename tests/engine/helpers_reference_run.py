"""Run a suite with reference answers, as a process the tests can kill.

``python helpers_reference_run.py SUITE DB REFERENCE_MODEL CONCURRENCY [--resume]``:
expands the suite, adds a reference answer per input (``Plan.with_references``), runs it
through a ``Session`` and prints ``RUN_ID STATUS``. Run with ``tests/engine`` on
``PYTHONPATH`` so that the suite can name ``helpers_evaluators`` evaluators.
"""

from __future__ import annotations

import asyncio
import sys

from qualspec.engine import ExecuteOptions, RunOutcome, Session, expand
from qualspec.spec import load_suite


async def main(argv: list[str]) -> RunOutcome:
    suite_path, db, reference, concurrency = argv[:4]
    suite = load_suite(suite_path)
    plan = expand(suite).with_references(reference)
    options = ExecuteOptions(max_concurrency=int(concurrency), calibrate=False)
    async with Session(db=db, options=options) as session:
        return await session.run_plan(suite, plan, resume="--resume" in argv[4:])


if __name__ == "__main__":
    outcome = asyncio.run(main(sys.argv[1:]))
    print(outcome.run_id, outcome.status)
