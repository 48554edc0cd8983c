"""A named provider connection (``providers:``), and its settings under the Ray executor."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from qualspec.spec._base import _Model

__all__ = ["ProviderConfig", "RayOptions"]


class RayOptions(_Model):
    """How a provider runs under ``--executor ray`` (ignored by the local executor).

    Example (YAML): ``local: {type: local, ray: {actors: 4, num_cpus: 2}}``.
    """

    actors: int | None = Field(
        default=None, ge=1, description="Actors (copies of the model); default: one per node."
    )
    num_cpus: float | None = Field(
        default=None, gt=0, description="CPUs each actor reserves (and threads it runs); 1."
    )


class ProviderConfig(_Model):
    """A named provider connection, e.g. a private OpenAI-compatible server.

    Example (YAML)::

        providers:
          mylab: {type: openai, base_url: "http://127.0.0.1:8000/v1", api_key_env: MYLAB_KEY}
          llama: {type: openai, base_urls: ["http://10.0.0.5:8080/v1", "http://10.0.0.6:8080/v1"]}
    """

    type: Literal["openai", "anthropic", "local"] = "openai"
    base_url: str | None = None
    base_urls: list[str] | None = Field(
        default=None,
        description="Replicas of one OpenAI-compatible server (instead of base_url): each "
        "call goes to the replica with the fewest calls in flight, and a replica that fails "
        "is left out for replica_cooldown seconds.",
    )
    api_key_env: str | None = None
    max_concurrency: int | None = Field(
        default=None, ge=1, description="Calls at once to the server (to each replica)."
    )
    timeout: float | None = Field(default=None, gt=0)
    temperature_range: tuple[float, float] | None = None
    replica_cooldown: float | None = Field(
        default=None,
        gt=0,
        description="Seconds a failed replica of base_urls is left out (default 30).",
    )
    ray: RayOptions | None = Field(
        default=None,
        description="Under --executor ray: its actors (an embedded model always runs in "
        "actors; an HTTP provider only when this is set).",
    )

    @field_validator("base_urls")
    @classmethod
    def _replica_urls(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError(
                "base_urls is empty: list the replicas' URLs, e.g. "
                '["http://10.0.0.5:8080/v1", "http://10.0.0.6:8080/v1"], or use base_url'
            )
        for url in value:
            if not url.strip().startswith(("http://", "https://")):
                raise ValueError(
                    f"base_urls: {url!r} must start with http:// or https://, e.g. "
                    "http://127.0.0.1:8000/v1"
                )
        stripped = [url.strip().rstrip("/") for url in value]
        for url in stripped:
            if stripped.count(url) > 1:
                raise ValueError(f"base_urls lists {url!r} twice: list each replica once")
        return value

    @model_validator(mode="after")
    def _one_base_url_form(self) -> ProviderConfig:
        if self.base_urls is not None and self.base_url is not None:
            raise ValueError(
                "give either base_url (one server) or base_urls (its replicas), not both"
            )
        if self.base_urls is not None and self.type != "openai":
            raise ValueError(
                f"base_urls (replicas) is for OpenAI-compatible servers (type: openai), not "
                f"type: {self.type}: use base_url"
            )
        return self
