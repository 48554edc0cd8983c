"""An error of the Lab's calls said in the Lab's terms: the Lab has no suite, so what to
set is a flag of ``qualspec lab`` or a field of the web Lab, or an environment variable,
never a suite's ``providers:`` section. Shared by the CLI and the web app, which differ
only in how a user names a model and where an address is set."""

from __future__ import annotations

import re

__all__ = ["BASE_URL_ENV", "provider_named", "reworded"]

BASE_URL_ENV = {
    "openai": "OPENAI_BASE_URL",
    "openrouter": "OPENROUTER_BASE_URL",
    "ollama": "OLLAMA_BASE_URL",
    "vllm": "VLLM_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
}
"""The environment variable that sets each built-in provider's address."""

_PROVIDER = re.compile(r"[Pp]rovider '([^']+)'")


def provider_named(text: str) -> str | None:
    """The provider an error names (``provider 'NAME'``), or None."""
    found = _PROVIDER.search(text)
    return found.group(1) if found else None


def reworded(
    text: str, *, name: str | None, choose: str, choose_key: str, address_fix: str, where: str
) -> str:
    """``text`` with every pointer to a suite replaced.

    Args:
        text: The error.
        name: The provider it names (see :func:`provider_named`).
        choose: What replaces "; or define it under providers: in the suite".
        choose_key: How a user picks another provider (" with --model/--judge", or "").
        address_fix: How a provider's address is fixed (``set OPENAI_BASE_URL to ...``).
        where: What "in the suite" becomes ("flags (--model, --judge)", "fields").
    """
    text = text.replace("; or define it under providers: in the suite", choose)
    text = text.replace(
        "set api_key_env for this provider in the suite's providers section",
        f"provider '{name}' sends no API key: {address_fix} of a server that needs none, or "
        f"choose{choose_key} a provider with a key variable (openai: OPENAI_API_KEY, "
        "anthropic: ANTHROPIC_API_KEY)",
    )
    text = text.replace(
        "check that the server is running and its base_url",
        f"check that the server is running, or {address_fix}",
    )
    return text.replace("in the suite", f"in the Lab's {where}")
