"""Language-model runtime: the embedded llama.cpp engine, local model resolution and `make_lm`.

`resolve_local_model` and the schema/JSON helpers need neither dspy nor llama.cpp; `make_lm` and
`LlamaCppEngine` load dspy on first use, and llama.cpp only when a model first generates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evigate.llm.json_text import escape_control_chars_in_strings, repair_json_text
from evigate.llm.models import DEFAULT_LOCAL_MODEL, LOCAL_MODELS, LocalModelSpec, model_cache_dir, resolve_local_model
from evigate.llm.schema_bounds import SchemaBounds, bound_json_schema, is_bounded, unbounded_paths

if TYPE_CHECKING:
    from evigate.llm.engine import AsyncLlamaCppEngine, LlamaCppEngine
    from evigate.llm.from_settings import lm_from_settings
    from evigate.llm.lm import make_lm

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "LOCAL_MODELS",
    "AsyncLlamaCppEngine",
    "LlamaCppEngine",
    "LocalModelSpec",
    "SchemaBounds",
    "bound_json_schema",
    "escape_control_chars_in_strings",
    "is_bounded",
    "lm_from_settings",
    "make_lm",
    "model_cache_dir",
    "repair_json_text",
    "resolve_local_model",
    "unbounded_paths",
]

_LAZY = {
    "LlamaCppEngine": "evigate.llm.engine",
    "AsyncLlamaCppEngine": "evigate.llm.engine",
    "make_lm": "evigate.llm.lm",
    "lm_from_settings": "evigate.llm.from_settings",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'evigate.llm' has no attribute {name!r}")
