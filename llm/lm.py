"""`make_lm`: one function from a model string to a `dspy.LM`, local or remote; `constrained_lm`: it for one call."""

from __future__ import annotations

from typing import Any

import dspy

from evigate.llm.constraints import Constraints
from evigate.llm.engine import DEFAULT_MAX_TOKENS, AsyncLlamaCppEngine, LlamaCppEngine
from evigate.llm.models import DEFAULT_LOCAL_MODEL, LOCAL_PREFIX, is_local_model
from evigate.llm.schema_bounds import SchemaBounds

# Options that configure the local engine rather than the dspy.LM around it.
_ENGINE_OPTIONS = (
    "n_ctx",
    "n_threads",
    "prompt_cache_mb",
    "default_max_tokens",
    "cache_dir",
    "persist_prefixes",
    "fast_greedy",
    "structured",
)
_BOUND_OPTIONS = ("max_string_length", "max_array_items", "close_objects", "field_limits", "omit_fields")


def make_lm(model: str, **kwargs: Any) -> dspy.LM:
    """A `dspy.LM` for `model`.

    `local/<name>` (or just `local`) runs a bundled GGUF in-process through `LlamaCppEngine`; `<name>` is
    a registered local model (default `qwen2.5-coder-0.5b`) or a path to a `.gguf` file. Its file is
    resolved and verified here, so a missing package fails now with the pip command to run (ModelError),
    not at the first call. Local LMs default to `cache=False` (a rerun really runs) and `num_retries=0`
    (a local failure is not transient). Engine options: n_ctx, n_threads, prompt_cache_mb,
    default_max_tokens, cache_dir, persist_prefixes, fast_greedy, structured, max_string_length, max_array_items,
    close_objects, field_limits (property name -> limit), omit_fields, timeout.

    Anything else (`openai/gpt-4o-mini`, `ollama_chat/qwen2.5`, `openai/<model>` with `api_base=` for a
    vLLM server) is a plain `dspy.LM`; `timeout` and every other keyword pass through to it.
    """
    if not is_local_model(model):
        return dspy.LM(model, **kwargs)
    engine = _local_engine(model.partition("/")[2] or DEFAULT_LOCAL_MODEL, kwargs)
    engine.model_path()  # resolve + verify now: a missing model is a configuration error, raise it early
    kwargs.setdefault("cache", False)
    kwargs.setdefault("num_retries", 0)
    kwargs.setdefault("max_tokens", engine.default_max_tokens)
    return dspy.LM(f"{LOCAL_PREFIX}/{engine.model}", engine=engine, async_engine=AsyncLlamaCppEngine(engine), **kwargs)


def _local_engine(name: str, kwargs: dict[str, Any]) -> LlamaCppEngine:
    engine_options = {key: kwargs.pop(key) for key in _ENGINE_OPTIONS if key in kwargs}
    bound_options = {key: kwargs.pop(key) for key in _BOUND_OPTIONS if key in kwargs}
    timeout = kwargs.pop("timeout", None)
    engine_options.setdefault("default_max_tokens", kwargs.get("max_tokens") or DEFAULT_MAX_TOKENS)
    return LlamaCppEngine(name, bounds=SchemaBounds.create(**bound_options), timeout=timeout, **engine_options)


def constrained_lm(lm: Any, constraints: Constraints) -> Any:
    """``lm`` for one call that decodes under ``constraints``: hand it to the predictor (``lm=``) of that call.

    Only an LM whose engine builds grammars (the local llama.cpp engine) takes them: it gets a copy bound to them,
    recording into the same history. Any other LM (a remote model, a test's DummyLM, None) comes back unchanged, so
    nothing of them reaches an HTTP request. Thread-safe: the LM and engine shared by sessions are never changed.
    """
    engine = getattr(lm, "engine", None)
    if not constraints or not isinstance(engine, LlamaCppEngine):
        return lm
    bound = engine.constrained(constraints)
    copied = lm.copy(engine=bound, async_engine=AsyncLlamaCppEngine(bound))
    copied.history = lm.history  # one LM to whoever inspects it: the call is in the agent's LM's history
    return copied
