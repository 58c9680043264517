"""JSON-schema → llama.cpp grammar, bounded, strict about control characters, and checked before use."""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from evigate.llm.requests import JsonFormat
from evigate.llm.runtime import LoadedModel
from evigate.llm.schema_bounds import SchemaBounds, bound_json_schema
from evigate.llm.schema_plan import Node, UnsupportedSchema, compile_schema

logger = logging.getLogger(__name__)

_CACHE_SIZE = 64
_gbnf_cache: OrderedDict[str, str] = OrderedDict()
_plan_cache: OrderedDict[str, Node | None] = OrderedDict()
_cache_lock = threading.Lock()


def grammar_text(json_format: JsonFormat, bounds: SchemaBounds) -> str:
    """GBNF for the bounded schema (cached), or llama.cpp's plain JSON grammar when no schema is given.

    A schema the converter cannot translate falls back to the plain JSON grammar (logged): still JSON,
    the shape is checked later by the adapter.
    """
    from llama_cpp.llama_grammar import JSON_GBNF, json_schema_to_gbnf

    if json_format.schema is None:
        return JSON_GBNF
    schema = bound_json_schema(json_format.schema, bounds)

    def build() -> str:
        try:
            return strict_string_chars(json_schema_to_gbnf(json.dumps(schema)))
        except Exception as exc:  # the converter raises bare AssertionError/KeyError/ValueError on odd schemas
            logger.warning("response schema not convertible to a grammar (%s); constraining to plain JSON", exc)
            return JSON_GBNF

    return _memoised(_gbnf_cache, schema, build)


def decoding_plan(json_format: JsonFormat, bounds: SchemaBounds) -> Node | None:
    """The bounded schema compiled for `schema_decoder` (cached), or None when it has none or uses what the
    structured decoder does not implement (logged once; the grammar path then decodes it)."""
    if json_format.schema is None:
        return None
    schema = bound_json_schema(json_format.schema, bounds)

    def build() -> Node | None:
        try:
            return compile_schema(schema)
        except UnsupportedSchema as exc:
            logger.info("response schema decoded under a grammar instead of by structure: %s", exc)
            return None

    return _memoised(_plan_cache, schema, build)


def _memoised(cache: OrderedDict[str, Any], schema: dict[str, Any], build: Callable[[], Any]) -> Any:
    """`build()` for this schema, kept in a small LRU keyed by the schema's canonical JSON."""
    key = json.dumps(schema, sort_keys=True, ensure_ascii=False)
    with _cache_lock:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    value = build()
    with _cache_lock:
        cache[key] = value
        while len(cache) > _CACHE_SIZE:
            cache.popitem(last=False)
    return value


def accepted_gbnf(loaded: LoadedModel, gbnf: str) -> str:
    """`gbnf` when llama.cpp accepts it, else (logged) the plain JSON grammar: the one fallback of both paths."""
    from llama_cpp.llama_grammar import JSON_GBNF

    if loaded.accepts_grammar(gbnf):
        return gbnf
    logger.warning("llama.cpp refused the response grammar (%d chars); constraining to plain JSON", len(gbnf))
    return JSON_GBNF


def usable_grammar(loaded: LoadedModel, gbnf: str) -> Any:
    """The LlamaGrammar the sampler chain applies: `accepted_gbnf`, compiled."""
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(accepted_gbnf(loaded, gbnf), verbose=False)


# llama-cpp-python's schema converter (0.3.x) lets a string character be anything but a quote or a
# backslash, so models write raw newlines inside strings, which strict JSON parsers reject. Its own
# JSON_GBNF excludes control characters; give schema grammars the same character class.
_PERMISSIVE_CHAR_RULE = r'char ::= [^"\\] |'
_STRICT_CHAR_RULE = r'char ::= [^"\\\x7F\x00-\x1F] |'


def strict_string_chars(gbnf: str) -> str:
    """`gbnf` with the converter's string-character rule narrowed to exclude control characters."""
    return gbnf.replace(_PERMISSIVE_CHAR_RULE, _STRICT_CHAR_RULE)
