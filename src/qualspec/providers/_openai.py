"""OpenAI-compatible chat completions (OpenAI, OpenRouter, Ollama, vLLM, any base URL).

Speaks raw HTTP through :class:`~qualspec.providers._http.HTTPClient` (aiohttp), not the
OpenAI SDK, so that 100 concurrent calls cost little CPU.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.errors import ConfigError, MissingAPIKeyError
from qualspec.providers._base import ChatRequest, ChatResponse, Provider
from qualspec.providers._http import (
    DEFAULT_REMOTE_CONCURRENCY,
    HTTPClient,
    JSONProvider,
    bad_response,
    body_error,
    connection_limits,
    int_or_none,
    parse_structured,
    split_base_url,
)
from qualspec.providers._logprobs import read_logprobs
from qualspec.providers._replicas import DEFAULT_COOLDOWN, ReplicaSet

if TYPE_CHECKING:
    from qualspec.spec import ProviderConfig

__all__ = [
    "OpenAIProvider",
    "create_ollama",
    "create_openai",
    "create_openrouter",
    "create_vllm",
    "resolve_key",
]

_REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")


@dataclass(frozen=True, slots=True)
class _Defaults:
    name: str
    base_url: str
    base_url_env: str | None
    key_env: str | None
    key_required: bool


_OPENAI = _Defaults(
    "openai", "https://api.openai.com/v1", "OPENAI_BASE_URL", "OPENAI_API_KEY", True
)
_OPENROUTER = _Defaults(
    "openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_BASE_URL", "OPENROUTER_API_KEY", True
)
_OLLAMA = _Defaults("ollama", "http://localhost:11434/v1", "OLLAMA_BASE_URL", None, False)
_VLLM = _Defaults("vllm", "http://localhost:8000/v1", "VLLM_BASE_URL", "VLLM_API_KEY", False)


def resolve_key(provider: str, variable: str | None, *, required: bool) -> str | None:
    """Read an API key from the environment; raise MissingAPIKeyError if required and unset."""
    if variable is None:
        return None
    value = os.environ.get(variable, "").strip()
    if value:
        return value
    if required:
        raise MissingAPIKeyError(provider, variable)
    return None


class OpenAIProvider(JSONProvider):
    """A chat-completions client for any OpenAI-compatible server.

    Example::

        provider = OpenAIProvider("mylab", base_url="http://127.0.0.1:8000/v1", api_key=None)
        request = ChatRequest(model="m", messages=(Message("user", "hi"),))
        response = await provider.complete(request)
    """

    def __init__(
        self,
        name: str,
        *,
        base_url: str,
        api_key: str | None,
        key_variable: str | None = None,
        temperature_range: tuple[float, float] = (0.0, 2.0),
        default_concurrency: int = DEFAULT_REMOTE_CONCURRENCY,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        parts = split_base_url(base_url)
        if parts.basic_auth and api_key:
            raise ConfigError(
                f"Provider '{name}': its base_url holds credentials (user:password@) and an "
                f"API key is set ({key_variable or 'api_key'}): keep one, by removing the "
                "credentials from base_url or the api_key_env setting"
            )
        # never holds credentials: they are sent as headers, and scrubbed from every text
        self.base_url = parts.url
        # where calls go: the engine keys concurrency limits and the cache by it
        self.endpoint = self.base_url
        self.temperature_range = temperature_range
        self.default_concurrency = default_concurrency
        self._url = parts.request_url("chat/completions")
        self._official = "api.openai.com" in self.base_url
        all_headers = dict(headers or {})
        if api_key:
            all_headers["Authorization"] = f"Bearer {api_key}"
        elif parts.basic_auth:
            all_headers["Authorization"] = parts.basic_auth
        self.secret_values: tuple[str, ...] = (*((api_key,) if api_key else ()), *parts.secrets)
        """Values the engine scrubs from answers and errors (the key, URL credentials)."""
        self._http = HTTPClient(
            provider=name, headers=all_headers, key_variable=key_variable, secret=api_key
        )

    def __repr__(self) -> str:
        return f"OpenAIProvider(name={self.name!r}, base_url={self.base_url!r})"

    def build_payload(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (extra params pass through)."""
        body: dict[str, Any] = dict(request.params)
        body["model"] = request.model
        body["messages"] = [{"role": m.role, "content": m.content} for m in request.messages]
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if self._official and _REASONING_MODEL.match(request.model) and "max_tokens" in body:
            body["max_completion_tokens"] = body.pop("max_tokens")
        if request.json_schema is not None:
            if request.structured_mode == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": "response",
                        "schema": request.json_schema,
                        "strict": True,
                    },
                }
            elif request.structured_mode == "json_object":
                # JSON mode; servers that take a schema with it (llama.cpp, vLLM) get one
                fmt: dict[str, Any] = {"type": "json_object"}
                if not self._official:
                    fmt["schema"] = request.json_schema
                body["response_format"] = fmt
        return body

    def parse_response(self, data: Any, request: ChatRequest) -> ChatResponse:
        """Turn a decoded chat-completions body into a :class:`ChatResponse`."""
        error = body_error(data)
        if error is not None:  # a 200 whose body is {"error": ...}: the provider's message
            raise bad_response(self.name, request.model, 200, f"the server answered: {error}")
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise bad_response(self.name, request.model, 200, "no choices[0].message") from exc
        if not isinstance(message, dict):
            raise bad_response(self.name, request.model, 200, "choices[0].message is not an object")
        content = message.get("content")
        if content is None:
            content = message.get("refusal") or ""
        if not isinstance(content, str):
            raise bad_response(self.name, request.model, 200, "message content is not text")
        usage = data.get("usage") if isinstance(data, dict) else None
        input_tokens = output_tokens = None
        if isinstance(usage, dict):
            input_tokens = int_or_none(usage.get("prompt_tokens"))
            output_tokens = int_or_none(usage.get("completion_tokens"))
        structured = parse_structured(content) if request.json_schema is not None else None
        return ChatResponse(
            text=content,
            finish_reason=choice.get("finish_reason") if isinstance(choice, dict) else None,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            structured=structured,
            logprobs=read_logprobs(choice.get("logprobs")) if isinstance(choice, dict) else None,
        )


def _check_url(name: str, base_url: str) -> None:
    if not base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"Provider '{name}': base_url {base_url!r} must start with http:// or https://, "
            "e.g. http://127.0.0.1:8000/v1"
        )


def _build(name: str, config: ProviderConfig | None, defaults: _Defaults) -> Provider:
    base_url = config.base_url if config is not None else None
    replicas = [u.strip() for u in config.base_urls or ()] if config is not None else []
    custom = (base_url is not None or bool(replicas)) and name != defaults.name
    if base_url is None and defaults.base_url_env:
        base_url = os.environ.get(defaults.base_url_env, "").strip() or None
    base_url = base_url or defaults.base_url
    for url in replicas or [base_url]:
        _check_url(name, url)
    if config is not None and config.api_key_env:
        key_variable: str | None = config.api_key_env
        required = True
    elif custom:
        key_variable, required = None, False
    else:
        key_variable, required = defaults.key_env, defaults.key_required
    api_key = resolve_key(name, key_variable, required=required)
    temperature_range, concurrency = connection_limits(config, (0.0, 2.0))
    servers = [
        OpenAIProvider(
            name,
            base_url=url,
            api_key=api_key,
            key_variable=key_variable,
            temperature_range=temperature_range,
            default_concurrency=concurrency,
        )
        for url in replicas or [base_url]
    ]
    if not replicas:
        return servers[0]
    cooldown = config.replica_cooldown if config is not None else None
    return ReplicaSet(name, servers, cooldown=cooldown or DEFAULT_COOLDOWN)


def create_openai(name: str, config: ProviderConfig | None) -> Provider:
    """OpenAI (``OPENAI_API_KEY``, base URL from ``OPENAI_BASE_URL``) or a custom server.

    A suite entry ``{type: openai, base_url: ..., api_key_env: ...}`` under another name
    defines a custom OpenAI-compatible provider (no key unless ``api_key_env`` is set);
    with ``base_urls: [...]`` instead of ``base_url``, a :class:`ReplicaSet` of its replicas.
    """
    return _build(name, config, _OPENAI)


def create_openrouter(name: str, config: ProviderConfig | None) -> Provider:
    """OpenRouter (``OPENROUTER_API_KEY``)."""
    return _build(name, config, _OPENROUTER)


def create_ollama(name: str, config: ProviderConfig | None) -> Provider:
    """Ollama's OpenAI-compatible endpoint on localhost:11434 (no key)."""
    return _build(name, config, _OLLAMA)


def create_vllm(name: str, config: ProviderConfig | None) -> Provider:
    """A vLLM server on localhost:8000 (``VLLM_API_KEY`` optional)."""
    return _build(name, config, _VLLM)
