"""Provider addresses (``provider/model``) and the pool that creates providers by name.

Factories come from the entry point group ``qualspec.providers`` (the built-ins are
registered there the same way as plugins) and are imported only when first used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from qualspec.errors import ConfigError, MissingDependencyError
from qualspec.plugins import Registry
from qualspec.providers import Provider

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from qualspec.spec import ProviderConfig

__all__ = ["ENTRY_POINT_GROUP", "ProviderPool", "available_providers", "split_address"]

ENTRY_POINT_GROUP = "qualspec.providers"

Factory = Callable[[str, "ProviderConfig | None"], Provider]

# What a built-in provider type needs beyond qualspec's own dependencies:
# (module to find, package to name, extra that installs it).
_REQUIRES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "local": (("llama_cpp", "llama-cpp-python", "local"),),
}


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported (found without importing it)."""
    import importlib.util

    return importlib.util.find_spec(module) is not None


def split_address(address: str) -> tuple[str, str]:
    """Split ``provider/model`` at the first slash.

    Example: ``split_address("local/models/x.gguf")`` -> ``("local", "models/x.gguf")``.
    """
    provider, sep, model = address.strip().partition("/")
    if not sep or not provider or not model:
        raise ConfigError(
            f"Model address {address!r} must be provider/model, e.g. local/smollm2 or "
            "openai/gpt-4o-mini"
        )
    return provider, model


REGISTRY = Registry(ENTRY_POINT_GROUP, "provider type")
"""The provider types: entry points ``qualspec.providers`` (no dotted paths)."""


def available_providers() -> list[str]:
    """Names of the registered providers (built-ins and plugins), sorted."""
    return REGISTRY.names()


class ProviderPool:
    """Creates providers by name on first use and keeps one instance per name.

    ``configs`` are the suite's ``providers:`` entries: an entry under a registered name
    configures that provider; an entry under a new name defines a provider of its
    ``type`` (openai, anthropic or local).

    Example::

        pool = ProviderPool({"mylab": ProviderConfig(type="openai", base_url=url)})
        provider = pool.get("mylab")
        ...
        await pool.aclose()
    """

    def __init__(self, configs: Mapping[str, ProviderConfig] | None = None) -> None:
        self._configs: dict[str, ProviderConfig] = dict(configs or {})
        self._providers: dict[str, Provider] = {}
        self._eps: dict[str, EntryPoint] | None = None
        self._factories: dict[str, Factory] = {}

    def names(self) -> list[str]:
        """Every provider name this pool can create (registered plus configured), sorted."""
        return sorted(set(self._registered()) | set(self._configs))

    def config(self, name: str) -> ProviderConfig | None:
        """The suite configuration for ``name``, if any."""
        return self._configs.get(name)

    def get(self, name: str) -> Provider:
        """The provider called ``name``, created on first use (may raise ConfigError)."""
        provider = self._providers.get(name)
        if provider is None:
            config = self._configs.get(name)
            registered = self._registered()
            if name in registered:
                factory_name = name
            elif config is not None:
                factory_name = config.type
            else:
                raise self._unknown(name)
            provider = self._factory(factory_name)(name, config)
            self._providers[name] = provider
        return provider

    def check(self, address: str) -> None:
        """Check a ``provider/model`` address without creating its provider.

        No API key is needed and nothing is loaded: the provider must be registered or
        configured, the packages of its type installed, and a ``local`` model found.

        Raises:
            ConfigError: An unknown provider or a missing local model file.
            MissingDependencyError: A package the provider needs is not installed.
        """
        name, model = split_address(address)
        registered = self._registered()
        config = self._configs.get(name)
        if name in registered:
            kind = name
        elif config is not None:
            kind = config.type
        else:
            raise self._unknown(name)
        if kind not in registered:
            self._factory(kind)  # raises: the type is not registered
        for module, package, extra in _REQUIRES.get(kind, ()):
            if not _installed(module):
                raise MissingDependencyError(package, extra)
        if kind == "local":
            from qualspec.providers._local import resolve_model_path

            resolve_model_path(model)

    def resolve(self, address: str) -> tuple[Provider, str]:
        """The provider and model for a ``provider/model`` address."""
        name, model = split_address(address)
        return self.get(name), model

    async def aclose(self) -> None:
        """Close every provider this pool created."""
        providers = list(self._providers.values())
        self._providers.clear()
        for provider in providers:
            await provider.aclose()

    def _registered(self) -> dict[str, EntryPoint]:
        if self._eps is None:
            self._eps = dict(REGISTRY.entry_points())
        return self._eps

    def _factory(self, name: str) -> Factory:
        factory = self._factories.get(name)
        if factory is None:
            ep = self._registered().get(name)
            if ep is None:
                raise ConfigError(
                    f"Provider type '{name}' is not registered: reinstall qualspec "
                    "(pip install -e .) so its entry points are declared"
                )
            loaded: Any = ep.load()
            factory = self._factories[name] = loaded
        return factory

    def _unknown(self, name: str) -> ConfigError:
        names = self.names()
        hint = REGISTRY.hint(name, names)
        return ConfigError(
            f"Unknown provider '{name}': {hint}available: {', '.join(names)}; or define it "
            "under providers: in the suite"
        )
