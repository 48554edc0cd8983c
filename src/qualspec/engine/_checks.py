"""The checks of a run's settings, made by the library for every caller.

``qualspec run``, ``qualspec.run(...)`` and ``Session.run``/``run_plan`` go through the
same checks, so Python and the command line refuse the same values, with the same
one-line ``ConfigError`` (or ``SpecError`` for a suite's fields), before any call:

* the judge and threshold overrides (:meth:`Plan.with_judge`),
* scenarios with nothing to judge in a judged run (:func:`check_plan`),
* the call options (:class:`ExecuteOptions`, also ``Session(max_cost=...)``).

The command line parses its flags into these values and prints what is raised.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import TYPE_CHECKING

from qualspec.errors import ConfigError

if TYPE_CHECKING:
    # through the package: those files import this one (a type-only import of the
    # package is no file edge; see tests/test_layers.py)
    from qualspec.engine import ExecuteOptions, Plan
    from qualspec.spec import LoadedSuite

__all__ = ["check_judged", "check_options", "check_threshold"]

CACHE_KINDS = ("candidate", "judge", "reference")
_MAX_THRESHOLD = 10


def check_threshold(value: object) -> float:
    """The pass threshold as a float, checked as a suite's ``threshold:`` is (0 to 10).

    Raises:
        ConfigError: Not a number, or outside 0..10.
    """
    number = _number(value)
    if number is None:
        raise ConfigError(
            f"--threshold must be a number between 0 and {_MAX_THRESHOLD}, got {value!r}"
        )
    if not 0 <= number <= _MAX_THRESHOLD:  # also refuses nan
        raise ConfigError(f"--threshold must be between 0 and {_MAX_THRESHOLD}, got {number:g}")
    return number


def check_judged(suite: LoadedSuite, plan: Plan) -> None:
    """Refuse, for a judged run, the selected scenarios that have nothing to judge.

    A scenario without criteria, rubric, temperature-specific criteria, ``expect:``
    checks or a reference is fine under ``--no-judge`` (the caller then does not call
    this), and when no evaluator of the run scores criteria (only evaluators that read
    the answers their own way judge).

    Raises:
        SpecError: One issue per such scenario, at its line.
    """
    if not plan.criteria_judges:
        return
    from qualspec.errors import SpecError
    from qualspec.spec import criteria_issues

    issues = criteria_issues(
        suite.evaluation,
        plan.scenarios,
        file=suite.shown,
        source=suite.path,
        locator=suite.locator,
    )
    if issues:
        raise SpecError(issues)


def check_options(options: ExecuteOptions) -> None:
    """Refuse call options ``qualspec run`` refuses as flags (the same limits).

    Raises:
        ConfigError: Naming the option, what it takes and the value given.
    """
    if options.max_concurrency is not None:
        _whole("max_concurrency", options.max_concurrency, "(or None: each provider's own)")
    if options.max_in_flight is not None:
        _whole("max_in_flight", options.max_in_flight, "(or None: 1024, or 4 per call slot)")
    _whole("summarise_above", options.summarise_above, "work items")
    _above_zero("timeout", options.timeout, "seconds per attempt")
    _whole("retry.max_attempts", options.retry.max_attempts, "(the first attempt counts)")
    if options.max_cost is not None:
        _above_zero("max_cost", options.max_cost, "USD (or None: no budget)")
    _above_zero("store_retry_s", options.store_retry_s, "seconds")
    _cache_ttl(options.cache_ttl)
    if options.executor not in ("local", "ray"):
        raise ConfigError(f"executor: expected 'local' or 'ray', got {options.executor!r}")
    if options.ray_address is not None and options.executor != "ray":
        raise ConfigError("ray_address is for executor='ray': add executor='ray' (--executor ray)")
    if options.ray_actors is not None:
        _whole("ray_actors", options.ray_actors, "actors per provider (or None: one per node)")
    if options.ray_num_cpus is not None:
        _above_zero("ray_num_cpus", options.ray_num_cpus, "CPUs per actor")
    for kind in options.refresh_kinds:
        if kind not in CACHE_KINDS:
            raise ConfigError(
                f"refresh_kinds: unknown kind {kind!r}: give kinds among {', '.join(CACHE_KINDS)}"
            )


def _number(value: object) -> float | None:
    """``value`` as a float when it is a real number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def _whole(name: str, value: object, note: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 1:
        raise ConfigError(f"{name}: expected a whole number of 1 or more {note}, got {value!r}")


def _above_zero(name: str, value: object, unit: str) -> None:
    number = _number(value)
    if number is None or not math.isfinite(number) or number <= 0:
        raise ConfigError(f"{name}: expected a finite number above 0, in {unit}, got {value!r}")


def _cache_ttl(ttl: Mapping[str, float | None]) -> None:
    for kind, seconds in ttl.items():
        if kind not in CACHE_KINDS:
            raise ConfigError(
                f"cache_ttl: unknown kind {kind!r}: give seconds (or None: never expires) "
                f"for kinds among {', '.join(CACHE_KINDS)}, e.g. {{'candidate': 3600}}"
            )
        if seconds is None:
            continue
        number = _number(seconds)
        if number is None or not math.isfinite(number) or number < 0:
            raise ConfigError(
                f"cache_ttl[{kind!r}]: expected 0 or more seconds, or None (never expires), "
                f"got {seconds!r}"
            )
