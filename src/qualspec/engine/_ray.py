"""The Ray executor (``executor="ray"``): providers whose calls run in Ray actors.

Under ``ExecuteOptions(executor="ray")`` every embedded model (a provider marked
``embedded``: ``local``), and every HTTP provider whose suite entry has a ``ray:`` option,
is served by Ray actors: one provider (one loaded model) per actor, each reserving
``num_cpus``, placed by Ray's ``SPREAD`` strategy over the cluster's nodes. The driver sees
a provider whose ``replicas`` are the actors, so the engine routes each call as it routes
HTTP replicas: to the actor with the fewest calls in flight, under a limit per actor (the
backpressure), awaiting the actor call's ObjectRef. Everything else stays in the driver:
the store (its one writer), budget, cache, resume and retries.

An actor lost with its worker or its node fails the calls in flight on it: each moves at
once to another actor (a failover, not a retry) and Ray restarts the lost actor (on another
node when its own is gone). Each answer records the node that served it, ``ray:<node id>``.

``ray`` is imported here only, and only when a session asks for it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from qualspec.engine._call_cache import endpoint
from qualspec.errors import (
    AuthenticationError,
    BadResponseError,
    ConfigError,
    MissingDependencyError,
    ProviderError,
    ProviderTimeoutError,
    QualspecError,
    RateLimitError,
)
from qualspec.messages import one_line

if TYPE_CHECKING:
    from qualspec.engine._options import ExecuteOptions
    from qualspec.providers import ChatRequest, ChatResponse, Provider
    from qualspec.spec import ProviderConfig

__all__ = ["ACTOR_COOLDOWN", "ActorReplica", "ActorSet", "ProviderActor", "RayActors"]

log = logging.getLogger("qualspec.engine")

ACTOR_COOLDOWN = 10.0
"""Seconds an actor that was lost is left out (Ray restarts it meanwhile)."""
DEFAULT_NUM_CPUS = 1.0
"""CPUs an actor reserves when neither the provider's ``ray.num_cpus`` nor the run says."""
START_TIMEOUT = 180.0
"""Seconds the cluster has to start a provider's actors before the run is refused."""
COMEBACK_TIMEOUT = 120.0
"""Seconds an actor set has, after one of its actors was lost, to show one that answers
(Ray restarting it included) before the run stops ``failed`` (resumable)."""

_ERRORS: dict[str, type[QualspecError]] = {
    cls.__name__: cls
    for cls in (
        ProviderError,
        AuthenticationError,
        RateLimitError,
        ProviderTimeoutError,
        BadResponseError,
        ConfigError,
    )
}


def import_ray() -> Any:
    """The ``ray`` module (the ``ray`` extra), imported on first use."""
    try:
        import ray
    except ImportError as exc:
        raise MissingDependencyError("ray", "ray") from exc
    return ray


class ProviderActor:
    """Runs in a Ray worker: one provider (one loaded model) serving the driver's calls.

    Errors travel back as values (class name and fields) and are raised again in the
    driver as the same qualspec error, so the engine classifies them as for a call made
    in-process.
    """

    def __init__(self, name: str, config: dict[str, Any] | None, env: dict[str, str]) -> None:
        os.environ.update(env)
        from qualspec.providers import ProviderPool
        from qualspec.spec import ProviderConfig

        configs = {} if config is None else {name: ProviderConfig.model_validate(config)}
        self._provider = ProviderPool(configs).get(name)
        self._node = str(import_ray().get_runtime_context().get_node_id())

    async def node_id(self) -> str:
        """The id of the Ray node this actor runs on."""
        return self._node

    async def complete(self, request: ChatRequest) -> tuple[Any, ...]:
        """``("ok", response)`` with ``served_by`` set, or ``("error", class, fields)``."""
        try:
            response = await self._provider.complete(request)
        except QualspecError as exc:
            fields = {
                k: getattr(exc, k, None)
                for k in ("provider", "model", "status", "retryable", "retry_after")
            }
            return ("error", type(exc).__name__, str(exc), fields)
        response.served_by = f"ray:{self._node}"
        return ("ok", response)


def _raised(result: tuple[Any, ...]) -> QualspecError:
    """The error an actor returned (see :meth:`ProviderActor.complete`), as itself."""
    _, name, message, fields = result
    cls = _ERRORS.get(name, ProviderError)
    if issubclass(cls, ProviderError):
        return cls(
            message,
            provider=fields["provider"] or "",
            model=fields["model"] or "",
            status=fields["status"],
            retryable=fields["retryable"],
            retry_after=fields["retry_after"],
        )
    return cls(message)


class _Watch:
    """Whether some actor of a set still answers, checked once one of them is lost: when
    none does within :data:`COMEBACK_TIMEOUT`, ``on_lost`` stops the run."""

    def __init__(self, name: str, actors: list[Any], on_lost: Callable[[str], None]) -> None:
        self._name = name
        self._actors = actors
        self._on_lost = on_lost
        self.task: asyncio.Task[None] | None = None

    def lost(self) -> None:
        """An actor was lost: check the set (once at a time)."""
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._check())

    async def _check(self) -> None:
        ray = import_ray()

        async def answers(ref: Any) -> bool:
            try:
                await ref
            except ray.exceptions.RayError:
                return False
            return True

        pings = [answers(actor.node_id.remote()) for actor in self._actors]
        try:
            for ping in asyncio.as_completed(pings, timeout=COMEBACK_TIMEOUT):
                if await ping:
                    return
        except TimeoutError:
            pass
        self._on_lost(
            f"every Ray actor of provider '{self._name}' was lost and none answered within "
            f"{COMEBACK_TIMEOUT:g}s (the cluster has no node left for it)"
        )


class ActorReplica:
    """One actor, as a provider: a replica of an :class:`ActorSet` the engine routes to.

    ``endpoint`` (``ray:<provider>#<n>``) keys the actor's own limit of calls in flight;
    a lost actor raises a retryable ``ProviderError`` without a status (the engine moves
    the call to another actor).
    """

    def __init__(self, name: str, actor: Any, index: int, inner: Provider, watch: _Watch) -> None:
        self.name = name
        self._watch = watch
        self.endpoint = f"ray:{name}#{index}"
        self.temperature_range = inner.temperature_range
        self.default_concurrency = inner.default_concurrency
        default = getattr(inner, "default_temperature", None)
        if default is not None:
            self.default_temperature = default
        self._actor = actor

    def __repr__(self) -> str:
        return f"ActorReplica({self.endpoint!r})"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send the call to the actor and await its answer (cancelled there when given up)."""
        ray = import_ray()
        ref = self._actor.complete.remote(request)
        try:
            result = await ref
        except asyncio.CancelledError:
            ray.cancel(ref)  # a timeout or Ctrl-C: the actor stops generating
            raise
        except ray.exceptions.RayTaskError as exc:  # a bug in the actor, not the model's
            raise ProviderError(
                f"the Ray actor of '{self.name}' raised {one_line(str(exc.cause))}",
                provider=self.name,
                model=request.model,
                retryable=False,
            ) from None
        except ray.exceptions.RayError as exc:  # its worker or node is gone
            self._watch.lost()
            raise ProviderError(
                f"Ray actor {self.endpoint} was lost ({type(exc).__name__}): its calls move "
                "to another actor while Ray restarts it",
                provider=self.name,
                model=request.model,
                retryable=True,
            ) from None
        if result[0] != "ok":
            raise _raised(result)
        response: ChatResponse = result[1]
        return response

    async def aclose(self) -> None:
        """Nothing to close here: :class:`RayActors` kills the actors."""


class ActorSet:
    """The provider the driver calls under ``executor="ray"``: its actors as ``replicas``.

    It keeps the wrapped provider's name, temperatures and cache keys (``cache_endpoint``:
    an answer cached by the local executor is found by the Ray one, and back).
    """

    def __init__(
        self, name: str, inner: Provider, replicas: list[ActorReplica], nodes: list[str]
    ) -> None:
        self.name = name
        self.replicas: tuple[ActorReplica, ...] = tuple(replicas)
        self.nodes = nodes
        """The node each actor started on (the same order as ``replicas``)."""
        self.replica_cooldown = ACTOR_COOLDOWN
        self.temperature_range = inner.temperature_range
        self.default_concurrency = inner.default_concurrency
        self.endpoint = f"ray:{name}"
        self.cache_endpoint = getattr(inner, "cache_endpoint", None) or endpoint(inner)
        self.secret_values: tuple[str, ...] = tuple(getattr(inner, "secret_values", None) or ())
        default = getattr(inner, "default_temperature", None)
        if default is not None:
            self.default_temperature = default

    def __repr__(self) -> str:
        return f"ActorSet(name={self.name!r}, actors={len(self.replicas)})"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Outside a session's routing: the first actor answers."""
        return await self.replicas[0].complete(request)

    async def aclose(self) -> None:
        """Nothing to close here: :class:`RayActors` kills the actors."""


class RayActors:
    """A session's connection to a Ray cluster and the actors it started.

    Connects on first use (``ray.init``: ``options.ray_address``, else ``RAY_ADDRESS``,
    else a Ray instance on this machine); :meth:`close` kills its actors and disconnects
    when it connected (a connection the caller made stays).
    """

    def __init__(self, options: ExecuteOptions, on_lost: Callable[[str], None]) -> None:
        self._on_lost = on_lost
        self._watches: list[_Watch] = []
        self._address = options.ray_address
        self._actors_per_provider = options.ray_actors
        self._num_cpus = options.ray_num_cpus
        self._connected_here = False
        self._actors: list[Any] = []
        self._sets: dict[tuple[str, str], ActorSet] = {}

    def wrap(self, name: str, provider: Provider, config: ProviderConfig | None) -> Provider:
        """``provider`` served by actors when it is embedded or its config has ``ray:``;
        otherwise ``provider`` itself (called from the driver)."""
        if not getattr(provider, "embedded", False) and (config is None or config.ray is None):
            return provider
        key = (name, "" if config is None else config.model_dump_json())
        found = self._sets.get(key)
        if found is None:
            found = self._sets[key] = self._start(name, provider, config)
        return found

    def _connect(self) -> Any:
        ray = import_ray()
        if not ray.is_initialized():
            try:
                ray.init(address=self._address, log_to_driver=False, logging_level=logging.WARNING)
            except Exception as exc:  # noqa: BLE001 - Ray raises plain Exception on a start timeout
                raise ConfigError(
                    f"could not connect to the Ray cluster at {self._address or 'RAY_ADDRESS'}"
                    f": {one_line(str(exc))}; start it (ray start --head) or fix --ray-address"
                ) from None
            self._connected_here = True
        return ray

    def _start(self, name: str, provider: Provider, config: ProviderConfig | None) -> ActorSet:
        ray = self._connect()
        settings = None if config is None else config.ray
        cpus = self._num_cpus or (settings and settings.num_cpus) or DEFAULT_NUM_CPUS
        count = self._actors_per_provider or (settings and settings.actors) or _alive_nodes(ray)
        remote = ray.remote(ProviderActor)
        dumped = None if config is None else config.model_dump(mode="json")
        env = _actor_env(config, cpus)
        run = uuid.uuid4().hex[:8]  # named, to be found in the cluster (qualspec:<provider>:..)
        actors = [
            remote.options(
                name=f"qualspec:{name}:{run}:{i}",
                num_cpus=cpus,
                scheduling_strategy="SPREAD",
                max_restarts=-1,
                max_task_retries=0,
            ).remote(name, dumped, env)
            for i in range(count)
        ]
        self._actors.extend(actors)
        try:
            nodes = ray.get([a.node_id.remote() for a in actors], timeout=START_TIMEOUT)
        except ray.exceptions.GetTimeoutError:
            raise ConfigError(
                f"the Ray cluster did not start {count} actor(s) of provider '{name}' within "
                f"{START_TIMEOUT:g}s (each reserves {cpus:g} CPU): add nodes, or lower "
                "--ray-actors or --ray-num-cpus"
            ) from None
        except ray.exceptions.RayError as exc:
            raise ConfigError(
                f"the Ray actors of provider '{name}' could not start: "
                f"{one_line(str(exc), 300)}; install qualspec (and its local extra) on "
                "every node"
            ) from None
        log.info("%s: %d Ray actor(s) on %d node(s)", name, count, len(set(nodes)))
        watch = _Watch(name, actors, self._on_lost)
        self._watches.append(watch)
        replicas = [ActorReplica(name, a, i, provider, watch) for i, a in enumerate(actors)]
        return ActorSet(name, provider, replicas, [str(n) for n in nodes])

    async def aclose(self) -> None:
        """Stop checking on lost actors; kill the actors and disconnect (:meth:`close`)."""
        for watch in self._watches:
            if watch.task is not None:
                watch.task.cancel()
        self._watches.clear()
        await asyncio.to_thread(self.close)

    def close(self) -> None:
        """Kill the actors started here; disconnect when the connection was made here."""
        if not self._actors and not self._connected_here:
            return
        ray = import_ray()
        for actor in self._actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception as exc:  # noqa: BLE001 - a cluster already gone
                log.debug("could not kill a Ray actor: %s", exc)
        self._actors.clear()
        self._sets.clear()
        if self._connected_here:
            self._connected_here = False
            ray.shutdown()


def _alive_nodes(ray: Any) -> int:
    """The nodes of the cluster that are alive (one actor each by default)."""
    return max(1, sum(1 for node in ray.nodes() if node.get("Alive")))


def _actor_env(config: ProviderConfig | None, cpus: float) -> dict[str, str]:
    """What an actor's process needs of the driver's environment: API keys, base URLs,
    the embedded model's settings, and as many llama.cpp threads as CPUs reserved."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k.endswith(("_API_KEY", "_BASE_URL")) or k.startswith("QUALSPEC_LOCAL_")
    }
    wanted = None if config is None else config.api_key_env
    if wanted and wanted in os.environ:
        env[wanted] = os.environ[wanted]
    env.setdefault("QUALSPEC_LOCAL_THREADS", str(max(1, math.floor(cpus))))
    return env
