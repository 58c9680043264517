"""JSON-schema → llama.cpp grammar, bounded, strict about control characters, and checked before use."""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from typing import Any

from evigate.llm.requests import JsonFormat
from evigate.llm.runtime import LoadedModel
from evigate.llm.schema_bounds import SchemaBounds, bound_json_schema

logger = logging.getLogger(__name__)

_GRAMMAR_CACHE_SIZE = 64
_gbnf_cache: OrderedDict[str, str] = OrderedDict()
_gbnf_lock = threading.Lock()


def grammar_text(json_format: JsonFormat, bounds: SchemaBounds) -> str:
    """GBNF for the bounded schema (cached), or llama.cpp's plain JSON grammar when no schema is given.

    A schema the converter cannot translate falls back to the plain JSON grammar (logged): still JSON,
    the shape is checked later by the adapter.
    """
    from llama_cpp.llama_grammar import JSON_GBNF, json_schema_to_gbnf

    if json_format.schema is None:
        return JSON_GBNF
    schema = bound_json_schema(json_format.schema, bounds)
    key = json.dumps(schema, sort_keys=True, ensure_ascii=False)
    with _gbnf_lock:
        cached = _gbnf_cache.get(key)
        if cached is not None:
            _gbnf_cache.move_to_end(key)
            return cached
    try:
        gbnf = strict_string_chars(json_schema_to_gbnf(json.dumps(schema)))
    except Exception as exc:  # the converter raises bare AssertionError/KeyError/ValueError on odd schemas
        logger.warning("response schema not convertible to a grammar (%s); constraining to plain JSON", exc)
        gbnf = JSON_GBNF
    with _gbnf_lock:
        _gbnf_cache[key] = gbnf
        while len(_gbnf_cache) > _GRAMMAR_CACHE_SIZE:
            _gbnf_cache.popitem(last=False)
    return gbnf


def usable_grammar(loaded: LoadedModel, gbnf: str) -> Any:
    """A LlamaGrammar llama.cpp accepts: `gbnf` itself, else (logged) the plain JSON grammar."""
    from llama_cpp import LlamaGrammar
    from llama_cpp.llama_grammar import JSON_GBNF

    if not loaded.accepts_grammar(gbnf):
        logger.warning("llama.cpp refused the response grammar (%d chars); constraining to plain JSON", len(gbnf))
        gbnf = JSON_GBNF
    return LlamaGrammar.from_string(gbnf, verbose=False)


# llama-cpp-python's schema converter (0.3.x) lets a string character be anything but a quote or a
# backslash, so models write raw newlines inside strings, which strict JSON parsers reject. Its own
# JSON_GBNF excludes control characters; give schema grammars the same character class.
_PERMISSIVE_CHAR_RULE = r'char ::= [^"\\] |'
_STRICT_CHAR_RULE = r'char ::= [^"\\\x7F\x00-\x1F] |'


def strict_string_chars(gbnf: str) -> str:
    """`gbnf` with the converter's string-character rule narrowed to exclude control characters."""
    return gbnf.replace(_PERMISSIVE_CHAR_RULE, _STRICT_CHAR_RULE)
