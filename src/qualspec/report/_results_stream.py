"""The results file of a large run, written as a stream: the same layout (``responses``
with their judgments nested), read from the store a page at a time and written as it is
read, so a run of any size is exported in constant memory.

``summary`` holds the counts only (``large_run: true``), and ``analysis`` and
``verdicts`` are null: computed over every answer, they are what ``qualspec serve`` and
``qualspec report`` show for such a run. Evaluation records of groups (comparisons) are
not written here.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from qualspec.report._atomic_files import _atomic_writer, _json_default
from qualspec.report._results_file import (
    _ROW_ID_FIELDS,
    SCHEMA_VERSION,
    _judgment_dict,
    _summary_fields,
)
from qualspec.store import ResponseRecord

if TYPE_CHECKING:
    from qualspec.store import JudgmentRecord, Store

__all__ = ["write_results_stream"]


def write_results_stream(store: Store, run_id: str, path: str | os.PathLike[str]) -> None:
    """Write run ``run_id``'s results file to ``path`` (atomically), a page at a time.

    Raises:
        ResultsFileError: The disk or the operating system refused the write.
    """
    from qualspec.version import __version__

    summary = store.get_run(run_id)
    head: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "qualspec_version": __version__,
        "run": _summary_fields(summary),
        "summary": {"counts": store.run_counts(summary.id), "large_run": True},
        "analysis": None,
        "verdicts": None,
    }
    text = json.dumps(head, indent=2, ensure_ascii=False, default=_json_default)
    # one encoder for every line (json.dumps with these options makes one per call)
    encode = json.JSONEncoder(ensure_ascii=False, default=_json_default).encode
    names = tuple(
        f.name for f in dataclasses.fields(ResponseRecord) if f.name not in _ROW_ID_FIELDS
    )
    judged_at_all = head["summary"]["counts"].get("judgments", 1) != 0
    with _atomic_writer(path) as handle:
        handle.write(text[: text.rindex("}")].rstrip() + ',\n  "responses": [')
        first = True
        for page in store.response_json_pages(summary.id, names):
            judged: dict[str, list[JudgmentRecord]] = defaultdict(list)
            if judged_at_all:  # a run without evaluation records asks for none
                for judgment in store.judgments_of(summary.id, [r["key"] for r in page]):
                    judged[judgment.response_key].append(judgment)
            lines = []
            for item in page:
                mine = sorted(judged.get(item["key"], ()), key=lambda j: (j.evaluator, j.criterion))
                item["judgments"] = [_judgment_dict(j, None) for j in mine]
                lines.append(encode(item))
            if lines:
                handle.write(("\n    " if first else ",\n    ") + ",\n    ".join(lines))
                first = False
        handle.write("\n  ]\n}\n")
