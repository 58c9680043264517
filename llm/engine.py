"""`LlamaCppEngine`: a DSPy custom engine that runs a local GGUF model in-process through llama.cpp.

DSPy 3.4 hands a custom engine one canonical `dspy.lm15.Request` per call and takes a `Response` back;
DSPy keeps its own cache, retries, history and usage tracking. The engine declares
`supports_response_schema` and `response_format` in `supported_params` — without the latter DSPy's
JSONAdapter sends no schema at all — and enforces the schema it receives as a llama.cpp grammar, after
bounding it (see schema_bounds) because small models loop inside unbounded strings and lists.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dspy.lm15 import (
    Message,
    Request,
    Response,
    TextPart,
    Usage,
    response_to_events,
)

from evigate.llm.chain import complete_with_chain
from evigate.llm.constraints import NO_CONSTRAINTS, Constraints
from evigate.llm.grammar import decoding_plan, grammar_text, usable_grammar
from evigate.llm.greedy import complete_greedy, is_plain_greedy
from evigate.llm.json_text import repair_json_text
from evigate.llm.models import (
    DEFAULT_LOCAL_MODEL,
    local_model_spec,
    prefix_persistence_enabled,
    prefix_state_dir,
    resolve_local_model,
)
from evigate.llm.prefix_reuse import stable_end
from evigate.llm.requests import chat_messages, response_format_of
from evigate.llm.runtime import (
    LoadedModel,
    LoadSettings,
    default_threads,
    extra_buffers_enabled,
    load_model,
    perf_counters,
    threads_for_next_call,
    use_threads,
)
from evigate.llm.schema_bounds import SchemaBounds

DEFAULT_MAX_TOKENS = 1024
DEFAULT_PROMPT_CACHE_MB = 256


class LlamaCppEngine:
    """Runs `local/<model>` requests on a GGUF file with llama.cpp, honouring DSPy's JSON schema.

    Args:
        model: a registered local model name (see `evigate.llm.models.LOCAL_MODELS`) or a `.gguf` path.
        n_ctx: context window in tokens; defaults to the model's registered context length.
        n_threads: CPU threads; default: chosen before each call from the cores other processes leave free
            (`threads_for_next_call`).
        bounds: limits added to unbounded strings/arrays/objects of every response schema.
        prompt_cache_mb: RAM for prompt states of recent calls (0 disables prefix reuse altogether; default: the
            model's registered value). Reusing the KV state of a shared prompt prefix skips re-evaluating DSPy's
            long per-signature system prompts when agents take turns (see prefix_cache).
        persist_prefixes: also keep each agent's system-prompt state on disk beside the model cache, so a new
            process starts warm.
        fast_greedy: at temperature 0, decode with `greedy.generate_greedy` (the grammar checks the chosen token,
            not the whole vocabulary); False uses llama-cpp-python's sampler chain.
        structured: on the fast greedy path, write a response schema's fixed text (keys, brackets, constants)
            directly and ask the model only for its choices (`schema_decoder`); False decodes every token under the
            grammar. Schemas the structured decoder does not implement use the grammar either way.
        default_max_tokens: used when a request sets no max_tokens.
        timeout: seconds one generation may take (after the model lock is acquired); None = no limit.
        cache_dir: where chunked models are assembled (default $EVIGATE_MODEL_CACHE or ~/.cache).
    """

    supports_response_schema = True
    supports_function_calling = False
    supports_reasoning = False
    supported_params = frozenset({"temperature", "max_tokens", "top_p", "top_k", "stop", "seed", "response_format"})

    def __init__(
        self,
        model: str = DEFAULT_LOCAL_MODEL,
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        bounds: SchemaBounds | None = None,
        prompt_cache_mb: int | None = None,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float | None = None,
        cache_dir: str | None = None,
        persist_prefixes: bool = True,
        fast_greedy: bool = True,
        structured: bool = True,
    ) -> None:
        is_path = model.endswith(".gguf")
        spec = None if is_path else local_model_spec(model)
        self.model = model
        self.n_ctx = n_ctx or (spec.context_length if spec else 8192)
        self.n_threads = n_threads
        self.bounds = bounds or SchemaBounds()
        if prompt_cache_mb is None:
            prompt_cache_mb = spec.prompt_cache_mb if spec else DEFAULT_PROMPT_CACHE_MB
        self.prompt_cache_mb = prompt_cache_mb
        self.default_max_tokens = default_max_tokens
        self.timeout = timeout
        self.cache_dir = cache_dir
        self.persist_prefixes = persist_prefixes
        self.fast_greedy = fast_greedy
        self.structured = structured
        self.chat_format = spec.chat_format if spec else None
        self.merge_system_into_user = spec.merge_system_into_user if spec else False
        self.constraints: Constraints = NO_CONSTRAINTS
        self._path: Path | None = None
        self._path_lock = threading.Lock()

    def constrained(self, constraints: Constraints) -> LlamaCppEngine:
        """This engine for one call: the same model and settings, decoding under ``constraints`` (see constraints)."""
        engine = copy.copy(self)  # shares the resolved model path; the loaded model is shared by the process anyway
        engine.constraints = constraints
        return engine

    def decoding_bounds(self) -> SchemaBounds:
        """The limits a response schema is decoded under: the engine's bounds with this call's constraints."""
        if not self.constraints:
            return self.bounds
        return dataclasses.replace(
            self.bounds, field_enums=self.constraints.field_enums, object_variants=self.constraints.object_variants
        )

    # -- DSPy engine protocol -------------------------------------------------------------------------

    def complete(self, request: Request) -> Response:
        """Run one generation for `request` and return it with token usage."""
        messages = chat_messages(request, merge_system_into_user=self.merge_system_into_user)
        json_format = response_format_of(request)
        bounds = self.decoding_bounds()
        config = request.config
        options: dict[str, Any] = {
            "temperature": 0.0 if config.temperature is None else config.temperature,
            "max_tokens": config.max_tokens or self.default_max_tokens,
            "stop": list(config.stop),
        }
        if config.top_p is not None:
            options["top_p"] = config.top_p
        if config.top_k is not None:
            options["top_k"] = config.top_k
        if config.seed is not None:
            options["seed"] = config.seed
        loaded = self.loaded()
        with loaded.lock:
            use_threads(loaded.llama, self.n_threads or threads_for_next_call())
            if loaded.prefix_cache is not None:
                loaded.prefix_cache.pin = stable_end(messages)
            prompt_evaluated_before = perf_counters(loaded.llama)[0]
            prompt = loaded.chat_prompt(messages) if self.fast_greedy and is_plain_greedy(options) else None
            # The structured decoder needs no grammar: build one only for what will decode under it.
            use_plan = prompt is not None and self.structured and json_format is not None
            plan = decoding_plan(json_format, bounds) if use_plan else None
            gbnf = grammar_text(json_format, bounds) if json_format is not None and plan is None else None
            if prompt is not None:
                deadline = None if self.timeout is None else time.monotonic() + self.timeout
                result = complete_greedy(loaded, prompt, gbnf, options["max_tokens"], deadline, self.model, plan)
            else:
                options["grammar"] = usable_grammar(loaded, gbnf) if gbnf is not None else None
                result = complete_with_chain(
                    loaded, messages, options, timeout=self.timeout, model_name=self.model, n_ctx=self.n_ctx
                )
            prompt_evaluated = perf_counters(loaded.llama)[0] - prompt_evaluated_before
        choice = result["choices"][0]
        text = repair_json_text(choice["message"].get("content") or "")
        usage = result.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens", 0))
        return Response(
            id=result.get("id") or None,
            model=self.model,
            message=Message.assistant([TextPart(text)]),
            finish_reason="length" if choice.get("finish_reason") == "length" else "stop",
            usage=Usage(
                input_tokens=prompt_tokens,
                output_tokens=int(usage.get("completion_tokens", 0)),
                cache_read_tokens=max(0, prompt_tokens - prompt_evaluated),
            ),
        )

    def stream(self, request: Request) -> Iterator[Any]:
        """The whole completion as stream events (llama.cpp runs to the end either way)."""
        return response_to_events(self.complete(request))

    def close(self) -> None:
        """Nothing to release: loaded models are shared by every engine of the process."""

    def dump_state(self) -> dict[str, Any]:
        """JSON state for `dspy.LM.dump_state` (saved programs)."""
        return {
            "model": self.model,
            "n_ctx": self.n_ctx,
            "n_threads": None,  # re-derived from the loading machine's cores
            "max_string_length": self.bounds.max_string_length,
            "max_array_items": self.bounds.max_array_items,
            "close_objects": self.bounds.close_objects,
            "field_limits": dict(self.bounds.field_limits),
            "omit_fields": sorted(self.bounds.omit_fields),
            "prompt_cache_mb": self.prompt_cache_mb,
            "default_max_tokens": self.default_max_tokens,
            "timeout": self.timeout,
            "persist_prefixes": self.persist_prefixes,
            "fast_greedy": self.fast_greedy,
            "structured": self.structured,
        }

    @classmethod
    def load_state(cls, state: dict[str, Any]) -> LlamaCppEngine:
        """Rebuild an engine from `dump_state` output."""
        bounds = SchemaBounds.create(
            max_string_length=state.get("max_string_length", SchemaBounds.max_string_length),
            max_array_items=state.get("max_array_items", SchemaBounds.max_array_items),
            close_objects=state.get("close_objects", SchemaBounds.close_objects),
            field_limits=state.get("field_limits"),
            omit_fields=state.get("omit_fields"),
        )
        return cls(
            state.get("model", DEFAULT_LOCAL_MODEL),
            n_ctx=state.get("n_ctx"),
            n_threads=state.get("n_threads"),
            bounds=bounds,
            prompt_cache_mb=state.get("prompt_cache_mb"),
            default_max_tokens=state.get("default_max_tokens", DEFAULT_MAX_TOKENS),
            timeout=state.get("timeout"),
            persist_prefixes=state.get("persist_prefixes", True),
            fast_greedy=state.get("fast_greedy", True),
            structured=state.get("structured", True),
        )

    # -- model ----------------------------------------------------------------------------------------

    def model_path(self) -> Path:
        """The verified GGUF file (resolved, and assembled if needed, once per engine)."""
        with self._path_lock:
            if self._path is None:
                self._path = resolve_local_model(self.model, cache_dir=self.cache_dir)
            return self._path

    def loaded(self) -> LoadedModel:
        """The shared loaded model for this engine's settings."""
        path = self.model_path()
        return load_model(
            LoadSettings(
                path=path,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads or default_threads(),
                chat_format=self.chat_format,
                prompt_cache_bytes=self.prompt_cache_mb << 20,
                use_extra_buffers=extra_buffers_enabled(),
                prefix_dir=prefix_state_dir(path, self.n_ctx, self.cache_dir) if self._persists() else None,
            )
        )

    def _persists(self) -> bool:
        return self.persist_prefixes and self.prompt_cache_mb > 0 and prefix_persistence_enabled()


class AsyncLlamaCppEngine:
    """The async counterpart DSPy needs for `acall`: the same engine, run on a worker thread."""

    def __init__(self, sync: LlamaCppEngine) -> None:
        self.sync = sync

    async def complete(self, request: Request) -> Response:
        """Run the sync engine off the event loop."""
        return await asyncio.to_thread(self.sync.complete, request)

    async def stream(self, request: Request) -> Any:
        """The whole completion as stream events."""
        for event in response_to_events(await self.complete(request)):
            yield event

    async def aclose(self) -> None:
        """Nothing to release (models are shared)."""

    def dump_state(self) -> dict[str, Any]:
        """Same state as the sync engine."""
        return self.sync.dump_state()

    @classmethod
    def load_state(cls, state: dict[str, Any]) -> AsyncLlamaCppEngine:
        """Rebuild from `dump_state` output."""
        return cls(LlamaCppEngine.load_state(state))
