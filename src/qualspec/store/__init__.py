"""The results database: runs, responses, judgments, prompt versions, cache.

``Store`` (and the migration helpers) import SQLAlchemy, so they are loaded on first
use: ``import qualspec.store`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qualspec.lazy import lazy_exports
from qualspec.store._label_records import LabelCounts, LabelRecord
from qualspec.store._records import (
    Answered,
    CacheEntry,
    JudgmentRecord,
    PromptVersion,
    ResponseRecord,
    RunRecord,
    RunSummary,
)
from qualspec.store._redact import REDACTED, redact, redact_text, redact_values
from qualspec.store._reference_records import ReferenceAnswer, ReferenceAuditEntry, ReferenceReview
from qualspec.store._review_input import USER_ENV, reviewer, schema_problem
from qualspec.store._url import database_exists, display_url, resolve_url
from qualspec.store._usage import USAGE_FIELDS, Usage

if TYPE_CHECKING:
    from qualspec.store._migrate import downgrade, head_revision, revisions, upgrade
    from qualspec.store._references import GROUND_TRUTH_STATUSES
    from qualspec.store._shared import COPY_CONSTANTS, COPY_FIELDS, COPY_FROM_CACHE
    from qualspec.store._store import Store

__all__ = [
    "COPY_CONSTANTS",
    "COPY_FIELDS",
    "COPY_FROM_CACHE",
    "GROUND_TRUTH_STATUSES",
    "REDACTED",
    "USAGE_FIELDS",
    "USER_ENV",
    "Answered",
    "CacheEntry",
    "JudgmentRecord",
    "LabelCounts",
    "LabelRecord",
    "PromptVersion",
    "ReferenceAnswer",
    "ReferenceAuditEntry",
    "ReferenceReview",
    "ResponseRecord",
    "RunRecord",
    "RunSummary",
    "Store",
    "Usage",
    "database_exists",
    "display_url",
    "downgrade",
    "head_revision",
    "redact",
    "redact_text",
    "redact_values",
    "resolve_url",
    "reviewer",
    "revisions",
    "schema_problem",
    "upgrade",
]

_LAZY = {
    "Store": "qualspec.store._lite_store",  # Store, with its SQLite-file subclass registered
    "COPY_CONSTANTS": "qualspec.store._shared",
    "COPY_FIELDS": "qualspec.store._shared",
    "COPY_FROM_CACHE": "qualspec.store._shared",
    "GROUND_TRUTH_STATUSES": "qualspec.store._references",
    "downgrade": "qualspec.store._migrate",
    "head_revision": "qualspec.store._migrate",
    "revisions": "qualspec.store._migrate",
    "upgrade": "qualspec.store._migrate",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
