"""Model providers behind one protocol, addressed as ``provider/model``.

Built-ins (``local``, ``openai``, ``openrouter``, ``ollama``, ``vllm``, ``anthropic``) are
registered through the ``qualspec.providers`` entry point group, like plugins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qualspec.providers._base import (
    STRUCTURED_MODES,
    ChatRequest,
    ChatResponse,
    Message,
    Provider,
    TokenLogprob,
    clamp_temperature,
    effective_temperature,
)
from qualspec.providers._logprobs import read_logprobs
from qualspec.providers._registry import ProviderPool, available_providers, split_address

if TYPE_CHECKING:
    from qualspec.providers._local import bounded_strings, resolve_model_path
    from qualspec.providers._prices import PriceTable
    from qualspec.providers._replicas import ReplicaSet, moves_to_another_replica, replica_label

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "Message",
    "PriceTable",
    "Provider",
    "ProviderPool",
    "ReplicaSet",
    "STRUCTURED_MODES",
    "TokenLogprob",
    "available_providers",
    "bounded_strings",
    "clamp_temperature",
    "effective_temperature",
    "moves_to_another_replica",
    "replica_label",
    "resolve_model_path",
    "read_logprobs",
    "split_address",
]


def __getattr__(name: str) -> Any:
    if name == "PriceTable":
        from qualspec.providers._prices import PriceTable

        return PriceTable
    if name in ("ReplicaSet", "moves_to_another_replica", "replica_label"):
        from qualspec.providers import _replicas

        return getattr(_replicas, name)
    if name in ("bounded_strings", "resolve_model_path"):
        from qualspec.providers import _local

        return getattr(_local, name)
    raise AttributeError(f"module 'qualspec.providers' has no attribute {name!r}")
