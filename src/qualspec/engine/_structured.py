"""What the call layer knows of each endpoint's structured output: the mode it settled on
after refusing a stronger one. A base class of :class:`~qualspec.engine.CallEngine`."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from qualspec.engine._call_cache import endpoint
from qualspec.providers import STRUCTURED_MODES

if TYPE_CHECKING:
    from qualspec.errors import ProviderError
    from qualspec.providers import ChatRequest, Provider

__all__ = ["StructuredModes", "format_refusal"]

log = logging.getLogger("qualspec.engine")


class StructuredModes:
    """The structured-output mode of each endpoint that refused a stronger one."""

    def __init__(self) -> None:
        self._modes: dict[str, str] = {}  # endpoint -> structured mode after a refusal
        self._endpoint_names: dict[str, str] = {}

    def structured_modes(self) -> dict[str, str]:
        """The structured-output mode each provider settled on, where one was stepped down.

        Example: ``{"llama_server": "json_object"}`` after the server refused JSON Schema.
        """
        return {self._endpoint_names[w]: m for w, m in sorted(self._modes.items())}

    def structured_mode_for(self, provider: Provider) -> str:
        """The structured-output mode calls to ``provider``'s endpoint ask with now."""
        return self._modes.get(endpoint(provider), STRUCTURED_MODES[0])

    def format_refused(self, provider: Provider, refused: str, error: str | None) -> str:
        """Note that ``provider`` refused structured output as ``refused``; the mode to ask
        with next (the endpoint keeps it for the rest of the session)."""
        self._step_down(provider, refused, error)
        lower = STRUCTURED_MODES[
            min(STRUCTURED_MODES.index(refused) + 1, len(STRUCTURED_MODES) - 1)
        ]
        now = self.structured_mode_for(provider)
        return max(lower, now, key=STRUCTURED_MODES.index)

    def _step_down(self, provider: Provider, refused: str, error: str | None) -> None:
        where = endpoint(provider)
        lower = STRUCTURED_MODES[STRUCTURED_MODES.index(refused) + 1]
        current = self._modes.get(where, STRUCTURED_MODES[0])
        # calls in flight may all be refused at once: step down once per refused mode
        if STRUCTURED_MODES.index(lower) > STRUCTURED_MODES.index(current):
            self._modes[where] = lower
            self._endpoint_names[where] = provider.name
            log.warning(
                "%s refused structured output as %s (%s); using %s from now on",
                provider.name,
                refused,
                (error or "")[:200],
                lower,
            )


def format_refusal(error: ProviderError, request: ChatRequest) -> bool:
    """Whether a request with structured output failed because of its format (see below):
    the call's own business, not the replica's (llama.cpp's server answers 500)."""
    return request.json_schema is not None and _rejects_format(error, request)


def _rejects_format(error: ProviderError, request: ChatRequest) -> bool:
    """Whether a server refused the structured-output mode itself (not the call).

    llama.cpp's server answers 500 "response_format.type: Input should be 'text' or
    'json_object'"; OpenAI 400 "'response_format' of type 'json_schema' is not supported".
    """
    if request.structured_mode == "none" or error.status not in (400, 422, 500):
        return False
    text = str(error).lower()
    return "response_format" in text or "json_schema" in text
