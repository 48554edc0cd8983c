"""The Lab's requests on the server: refused before any run is made, stopped when the
client has gone.

* ``refusal``: the generator's and the evaluator's model addresses are checked, and
  their providers created (which reads their API keys), before the Lab starts: a request
  naming an unknown provider, or one whose key is not set, is a 400 that leaves no run
  behind (it used to record a failed run, or answer the form with a 500).
* ``unless_disconnected``: the form posted without script waits for the whole Lab; when
  the browser goes away first, the Lab is cancelled (no further model call) and its run is
  left ``interrupted``, as the streamed Lab already did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from qualspec.lab import GenerateAnswerRequest
    from qualspec.spec import ProviderConfig
    from qualspec.web._state import WebState

__all__ = ["ClientGone", "model_problem", "refusal", "unless_disconnected"]

T = TypeVar("T")


class ClientGone(Exception):
    """The client disconnected before the answer was ready (the work was cancelled)."""


def model_problem(
    lab: GenerateAnswerRequest, providers: Mapping[str, ProviderConfig] | None
) -> str | None:
    """Why the Lab cannot call the request's models (a field, then how to fix it), or None."""
    from qualspec.errors import ConfigError
    from qualspec.lab import DEFAULT_MODEL
    from qualspec.providers import available_providers, split_address

    known = sorted(set(available_providers()) | set(providers or {}))
    model = lab.model or DEFAULT_MODEL
    for field, address in (("model", model), ("judge_model", lab.judge_model or model)):
        try:
            name, _ = split_address(address)
        except ConfigError as exc:
            return f"{field}: {exc}"
        if name not in known:
            return (
                f"{field}: unknown provider {name!r} in {address!r}: use one of "
                f"{', '.join(known)} (as provider/model)"
            )
    return None


async def refusal(lab: GenerateAnswerRequest, web: WebState) -> str | None:
    """Why the Lab must refuse ``lab`` before making a run (see ``model_problem``; a
    provider that cannot be created, such as one whose API key is not set), or None."""
    from qualspec.errors import QualspecError
    from qualspec.lab import DEFAULT_MODEL
    from qualspec.providers import split_address

    problem = model_problem(lab, web.providers)
    if problem is not None:
        return problem
    session = await web.session()
    model = lab.model or DEFAULT_MODEL
    names = sorted({split_address(model)[0], split_address(lab.judge_model or model)[0]})
    configs = session.provider_configs if web.providers is None else web.providers
    try:
        session.calls.providers(names, configs)  # as the CLI checks a judge before a run
    except QualspecError as exc:
        return str(exc)
    return None


async def unless_disconnected(request: Any, work: Awaitable[T]) -> T:
    """``work``'s result; cancelled, with :class:`ClientGone` raised, if the client of
    ``request`` (its body already read) disconnects first."""

    async def gone() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(gone())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()
    if task.cancelled() or not task.done():
        await asyncio.gather(task, return_exceptions=True)  # let it record its interruption
        raise ClientGone("the client went away: the work was stopped")
    return task.result()
