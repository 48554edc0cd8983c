"""One exception tree for qualspec. Every message says how to fix the problem.

```
QualspecError
├── SpecError                 a suite file is invalid (carries .issues, each with path:line:col)
├── ConfigError               a setting is wrong or missing
│   ├── MissingAPIKeyError    .variable names the environment variable to set
│   └── MissingDependencyError .extra names the `pip install` extra to add
├── ProviderError             a model call failed (.provider, .model, .status, .retryable,
│   │                         .retry_after); the engine decides about retries
│   ├── AuthenticationError   401/403: stops the whole run
│   ├── RateLimitError        429 (retryable, honours Retry-After)
│   ├── ProviderTimeoutError  an attempt ran past its timeout (retryable)
│   └── BadResponseError      the body could not be understood (retryable)
├── StoreError                the database refused something
│   ├── RunLockedError        another process is running/resuming that run
│   ├── SchemaVersionError    a results file or database is newer than this qualspec
│   ├── DatabaseURLError      the database URL is unreadable or unsupported (also a ConfigError)
│   ├── UnknownRunError       no run has that id (or the prefix is ambiguous; also a ConfigError)
│   └── UnknownReferenceError no reference answer has that id, or no such review status
│                             (also a ConfigError)
└── BudgetExceededError       --max-cost was reached (the run is resumable)
```
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "AuthenticationError",
    "BadResponseError",
    "BudgetExceededError",
    "ConfigError",
    "DatabaseURLError",
    "MissingAPIKeyError",
    "MissingDependencyError",
    "ProviderError",
    "ProviderTimeoutError",
    "QualspecError",
    "RateLimitError",
    "RunLockedError",
    "SchemaVersionError",
    "SpecError",
    "SpecIssue",
    "StoreError",
    "UnknownReferenceError",
    "UnknownRunError",
]


class QualspecError(Exception):
    """Base of every error qualspec raises on purpose."""

    docs_page: str | None = None
    """The page of the documentation that explains the fix (a path under ``docs/``): the
    command line names it after the error (``see docs/reference/suite.md``)."""


@dataclass(frozen=True)
class SpecIssue:
    """One problem in a suite file, printed as ``path:line:col: error: field: message``."""

    path: str
    line: int
    col: int
    field: str
    message: str

    def __str__(self) -> str:
        field = f"{self.field}: " if self.field else ""
        return f"{self.path}:{self.line}:{self.col}: error: {field}{self.message}"


class SpecError(QualspecError):
    """A suite file is invalid. ``issues`` lists every problem found."""

    docs_page = "reference/suite.md"

    def __init__(self, issues: list[SpecIssue]) -> None:
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))


class ConfigError(QualspecError):
    """A setting (CLI flag, environment variable, option) is wrong or missing."""

    docs_page = "reference/cli.md"


class MissingAPIKeyError(ConfigError):
    """An API key is required and its environment variable is not set."""

    docs_page = "reference/environment.md"

    def __init__(self, provider: str, variable: str) -> None:
        self.provider = provider
        self.variable = variable
        super().__init__(
            f"No API key for provider '{provider}': set the environment variable {variable}"
        )


class MissingDependencyError(ConfigError):
    """An optional package is needed; the message names the extra to install."""

    docs_page = "getting-started/install.md"

    def __init__(self, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"The package '{package}' is not installed: run pip install 'qualspec[{extra}]'"
        )


class ProviderError(QualspecError):
    """A model call failed. Providers classify; the engine retries."""

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        model: str = "",
        status: int | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.status = status
        if retryable is not None:
            self.retryable = retryable
        self.retry_after = retry_after
        super().__init__(message)


class AuthenticationError(ProviderError):
    """The provider refused the credentials; the run stops."""


class RateLimitError(ProviderError):
    """HTTP 429: retried after ``retry_after`` seconds when the server says so."""

    retryable = True


class ProviderTimeoutError(ProviderError):
    """An attempt ran past its timeout and was abandoned."""

    retryable = True


class BadResponseError(ProviderError):
    """The provider answered with a body qualspec cannot understand."""

    retryable = True


class StoreError(QualspecError):
    """The results database refused an operation."""


class RunLockedError(StoreError):
    """Another live process holds the run."""


class SchemaVersionError(StoreError):
    """Data written by a newer qualspec than this one."""


class DatabaseURLError(StoreError, ConfigError):
    """The database URL cannot be read or names an unsupported database (bad input)."""

    docs_page = "reference/environment.md"


class UnknownRunError(StoreError, ConfigError):
    """No run has the given id, or an id prefix matches several runs (bad input)."""

    docs_page = "guides/history.md"


class UnknownReferenceError(StoreError, ConfigError):
    """No reference answer has the given id (or a prefix matches several), or a review
    status is not one of the known ones (bad input)."""

    docs_page = "guides/reference-graded.md"


class BudgetExceededError(QualspecError):
    """The run reached --max-cost; it is recorded and can be resumed."""
