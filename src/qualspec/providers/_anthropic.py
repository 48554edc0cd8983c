"""Anthropic's Messages API over the shared aiohttp layer (no SDK)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from qualspec.errors import ConfigError
from qualspec.providers import ChatRequest, ChatResponse
from qualspec.providers._http import (
    DEFAULT_REMOTE_CONCURRENCY,
    HTTPClient,
    JSONProvider,
    bad_response,
    connection_limits,
    int_or_none,
    split_base_url,
)
from qualspec.providers._openai import resolve_key

if TYPE_CHECKING:
    from qualspec.spec import ProviderConfig

__all__ = ["AnthropicProvider", "create"]

DEFAULT_BASE_URL = "https://api.anthropic.com/v1"
DEFAULT_MAX_TOKENS = 1024
API_VERSION = "2023-06-01"
TOOL_NAME = "respond"


class AnthropicProvider(JSONProvider):
    """A Messages API client. Structured output uses a forced ``respond`` tool.

    Example::

        provider = AnthropicProvider("anthropic", base_url=DEFAULT_BASE_URL, api_key=key)
    """

    def __init__(
        self,
        name: str,
        *,
        base_url: str,
        api_key: str | None,
        key_variable: str | None = "ANTHROPIC_API_KEY",
        temperature_range: tuple[float, float] = (0.0, 1.0),
        default_concurrency: int = DEFAULT_REMOTE_CONCURRENCY,
    ) -> None:
        self.name = name
        parts = split_base_url(base_url)
        # never holds credentials: they are sent as headers, and scrubbed from every text
        self.base_url = _with_version(parts.url)
        # where calls go: the engine keys concurrency limits and the cache by it
        self.endpoint = self.base_url
        self.temperature_range = temperature_range
        self.default_concurrency = default_concurrency
        self._url = f"{self.base_url}/messages" + (f"?{parts.query}" if parts.query else "")
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        if parts.basic_auth:  # the key goes in x-api-key: URL credentials may come along
            headers["Authorization"] = parts.basic_auth
        self.secret_values: tuple[str, ...] = (*((api_key,) if api_key else ()), *parts.secrets)
        """Values the engine scrubs from answers and errors (the key, URL credentials)."""
        self._http = HTTPClient(
            provider=name,
            headers=headers,
            key_variable=key_variable,
            secret=api_key,
            retryable_statuses=frozenset({529}),
        )

    def __repr__(self) -> str:
        return f"AnthropicProvider(name={self.name!r}, base_url={self.base_url!r})"

    def build_payload(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (system messages become the ``system`` field)."""
        body: dict[str, Any] = dict(request.params)
        # the Messages API has no token log-probabilities: asked for, none come back
        body.pop("logprobs", None)
        body.pop("top_logprobs", None)
        system = [m.content for m in request.messages if m.role == "system"]
        body["model"] = request.model
        body["messages"] = [
            {"role": m.role, "content": m.content} for m in request.messages if m.role != "system"
        ]
        if system:
            body["system"] = "\n\n".join(system)
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        body.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.json_schema is not None and request.structured_mode != "none":
            body["tools"] = [
                {
                    "name": TOOL_NAME,
                    "description": "Give the answer in this structure.",
                    "input_schema": request.json_schema,
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
        return body

    def parse_response(self, data: Any, request: ChatRequest) -> ChatResponse:
        """Turn a decoded Messages API body into a :class:`ChatResponse`."""
        blocks = data.get("content") if isinstance(data, dict) else None
        if not isinstance(blocks, list):
            raise bad_response(self.name, request.model, 200, "no content list")
        texts: list[str] = []
        structured: Any = None
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "tool_use" and block.get("name") == TOOL_NAME:
                structured = block.get("input")
        if structured is not None:
            text = json.dumps(structured, ensure_ascii=False)
        else:
            text = "".join(texts)
        usage = data.get("usage")
        input_tokens = output_tokens = None
        if isinstance(usage, dict):
            input_tokens = int_or_none(usage.get("input_tokens"))
            output_tokens = int_or_none(usage.get("output_tokens"))
        return ChatResponse(
            text=text,
            finish_reason=data.get("stop_reason"),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            structured=structured if request.json_schema is not None else None,
        )


def _with_version(base_url: str) -> str:
    """Accept the SDK's convention (host only, e.g. ``https://api.anthropic.com``) too."""
    base_url = base_url.rstrip("/")
    scheme, _, rest = base_url.partition("://")
    if "/" not in rest:
        base_url += "/v1"
    return base_url


def create(name: str, config: ProviderConfig | None) -> AnthropicProvider:
    """Anthropic (``ANTHROPIC_API_KEY``, base URL from ``ANTHROPIC_BASE_URL``), or a custom
    Anthropic-compatible server from a suite ``providers:`` entry of type anthropic.
    """
    if config is not None and config.base_urls:
        raise ConfigError(
            f"Provider '{name}': base_urls (replicas) is for OpenAI-compatible servers "
            "(type: openai); give an Anthropic provider one base_url"
        )
    base_url = config.base_url if config is not None else None
    base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL", "").strip() or DEFAULT_BASE_URL
    if not base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"Provider '{name}': base_url {base_url!r} must start with http:// or https://, "
            "e.g. https://api.anthropic.com/v1"
        )
    key_variable = (config.api_key_env if config is not None else None) or "ANTHROPIC_API_KEY"
    api_key = resolve_key(name, key_variable, required=True)
    temperature_range, concurrency = connection_limits(config, (0.0, 1.0))
    return AnthropicProvider(
        name,
        base_url=base_url,
        api_key=api_key,
        key_variable=key_variable,
        temperature_range=temperature_range,
        default_concurrency=concurrency,
    )
