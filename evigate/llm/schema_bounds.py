"""Bound a JSON schema so a small model decoding under it cannot loop forever.

llama.cpp turns a JSON schema into a grammar. An unbounded `string` or `array` lets a 0.5B model repeat
itself until `max_tokens` (observed: the same excerpt or claim emitted hundreds of times), and an object
that admits additional properties lets it invent keys without end. Bounding every string, list and
object keeps decoding finite while leaving the shape the caller asked for intact. Pure: no I/O, no dspy.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

JsonSchema = dict[str, Any]

# Keywords whose value is a single sub-schema, a list of sub-schemas, or a name → sub-schema mapping.
_SINGLE_SCHEMA_KEYS = ("items", "additionalItems", "not", "if", "then", "else", "contains")
_SCHEMA_LIST_KEYS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAP_KEYS = ("properties", "$defs", "definitions", "patternProperties")

# A string restricted by one of these already has a finite (or grammar-defined) shape; maxLength would
# either be redundant or conflict with the format's own grammar.
_STRING_SHAPE_KEYS = ("enum", "const", "format", "pattern")


@dataclass(frozen=True)
class SchemaBounds:
    """Limits added to the parts of a schema that set none of their own.

    Attributes:
        max_string_length: `maxLength` given to every free-text string without one (characters).
        max_array_items: `maxItems` given to every array without one.
        close_objects: set `additionalProperties: false` on objects that declare properties but leave
            extra keys open, so the model cannot append invented keys.
        ceiling: the largest `maxLength`/`maxItems` kept; larger declared limits are lowered to it.
            llama.cpp expands a bounded repetition into nested rules and its grammar parser refuses a
            nesting of 1024 or more (measured with llama-cpp-python 0.3.36), so 1000 is the default.
    """

    max_string_length: int = 512
    max_array_items: int = 8
    close_objects: bool = True
    ceiling: int = 1000

    def __post_init__(self) -> None:
        for name in ("max_string_length", "max_array_items"):
            value = getattr(self, name)
            if not 1 <= value <= self.ceiling:
                raise ValueError(f"{name} must be between 1 and {self.ceiling}, got {value}")


def bound_json_schema(schema: JsonSchema, bounds: SchemaBounds | None = None) -> JsonSchema:
    """Return a deep copy of `schema` in which every string, array and object is bounded.

    Existing limits are kept; a default never undercuts a declared minimum (`minLength`/`minItems`).
    `$ref` targets are bounded where they are defined (`$defs`/`definitions`), so references stay valid.
    """
    if not isinstance(schema, dict):
        raise TypeError(f"a JSON schema must be an object, got {type(schema).__name__}")
    bounded = copy.deepcopy(schema)
    _bound_in_place(bounded, bounds or SchemaBounds())
    return bounded


def _types_of(node: JsonSchema) -> set[str]:
    declared = node.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return set()


def _bound_in_place(node: Any, bounds: SchemaBounds) -> None:
    if not isinstance(node, dict):
        return
    types = _types_of(node)
    if "string" in types and not any(k in node for k in _STRING_SHAPE_KEYS):
        node["maxLength"] = _limit(node, "maxLength", "minLength", bounds.max_string_length, bounds.ceiling)
    if "array" in types:
        node["maxItems"] = _limit(node, "maxItems", "minItems", bounds.max_array_items, bounds.ceiling)
    if bounds.close_objects and "object" in types and node.get("properties"):
        node["additionalProperties"] = False
    for key in _SINGLE_SCHEMA_KEYS:
        _bound_in_place(node.get(key), bounds)
    for key in _SCHEMA_LIST_KEYS:
        children = node.get(key)
        if isinstance(children, list):
            for child in children:
                _bound_in_place(child, bounds)
    for key in _SCHEMA_MAP_KEYS:
        children = node.get(key)
        if isinstance(children, dict):
            for child in children.values():
                _bound_in_place(child, bounds)


def _limit(node: JsonSchema, max_key: str, min_key: str, default: int, ceiling: int) -> int:
    declared = node.get(max_key)
    limit = min(declared, ceiling) if _is_int(declared) else default
    minimum = node.get(min_key)
    return max(limit, minimum) if _is_int(minimum) else limit


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_bounded(schema: JsonSchema) -> bool:
    """Whether every string and array reachable in `schema` carries a bound (used by tests and callers)."""
    return not list(unbounded_paths(schema))


def unbounded_paths(schema: Any, path: str = "#") -> list[str]:
    """JSON-pointer-like paths of every free-text string without maxLength and array without maxItems."""
    found: list[str] = []
    if not isinstance(schema, dict):
        return found
    types = _types_of(schema)
    if "string" in types and "maxLength" not in schema and not any(k in schema for k in _STRING_SHAPE_KEYS):
        found.append(path)
    if "array" in types and "maxItems" not in schema:
        found.append(path)
    for key in _SINGLE_SCHEMA_KEYS:
        found.extend(unbounded_paths(schema.get(key), f"{path}/{key}"))
    for key in _SCHEMA_LIST_KEYS:
        children = schema.get(key)
        if isinstance(children, list):
            for index, child in enumerate(children):
                found.extend(unbounded_paths(child, f"{path}/{key}/{index}"))
    for key in _SCHEMA_MAP_KEYS:
        children = schema.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                found.extend(unbounded_paths(child, f"{path}/{key}/{name}"))
    return found
