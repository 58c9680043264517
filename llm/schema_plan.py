"""Compile a bounded JSON schema into the small tree of choices `schema_decoder` walks.

A response schema fixes most of the text a model writes: every key, every bracket and comma, every constant.
Decoding it token by token under a grammar spends one model step per structural token (measured: 50-54% of the
Executor's tokens). Compiled into this tree, the fixed text is known in advance and only the real decisions remain:
which enum value, whether a list goes on, where a free string ends. Pure: no I/O, no llama.cpp, no DSPy.

Only what the response schemas of DSPy's JSON adapter use is supported (objects, arrays, strings with a length,
enum, const or pattern, integers, numbers, booleans, null, `$ref`, `anyOf`/`oneOf`, `type` lists); anything else
raises `UnsupportedSchema` and the caller decodes under a grammar instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

DEFAULT_STRING_LIMIT = 512
PATTERN_STRING_LIMIT = 64
MAX_DIGITS = 9
_MAX_DEPTH = 32
_IGNORED_KEYS = frozenset(
    {"title", "description", "default", "examples", "$defs", "definitions", "$schema", "$id", "$comment",
     "additionalProperties", "readOnly", "writeOnly", "deprecated"}
)  # fmt: skip


class UnsupportedSchema(ValueError):
    """The schema uses something the structured decoder does not implement (the caller falls back to a grammar)."""


@dataclass(frozen=True)
class Literal:
    """One of a fixed set of JSON texts (enum, const, boolean, null), e.g. `("\\"direct\\"", "\\"indirect\\"")`."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class FreeString:
    """A JSON string of at most `max_length` characters, optionally matching `pattern` (a Python regex)."""

    max_length: int
    min_length: int = 0
    pattern: str | None = None


@dataclass(frozen=True)
class Sequential:
    """A string the decoder writes itself: `template` with `{n}` = the 1-based position in the enclosing list.

    Declared with `"x-evigate-sequence": "claim-{n}"` beside a string's schema: ids carry no content, so code
    numbers them and no two items of a list share one.
    """

    template: str


@dataclass(frozen=True)
class Integer:
    """A JSON integer in [minimum, maximum] (None: unbounded on that side)."""

    minimum: int | None = None
    maximum: int | None = None


@dataclass(frozen=True)
class Array:
    """A list of `min_items`..`max_items` items; `unique` (uniqueItems) keeps enum items from repeating."""

    item: Node
    min_items: int
    max_items: int
    unique: bool = False


@dataclass(frozen=True)
class Object:
    """An object written with its `properties` (the required ones, in schema order)."""

    properties: tuple[tuple[str, Node], ...]


@dataclass(frozen=True)
class Choice:
    """`anyOf`/`oneOf`/a type list: exactly one of `branches`."""

    branches: tuple[Node, ...]


Node = Literal | FreeString | Sequential | Integer | Array | Object | Choice


def compile_schema(schema: dict[str, Any]) -> Node:
    """The decoding tree of `schema` (bounded by `schema_bounds` first); UnsupportedSchema when it cannot be built."""
    if not isinstance(schema, dict):
        raise UnsupportedSchema("a schema must be an object")
    return _Compiler(schema).node(schema, 0)


class _Compiler:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def node(self, schema: Any, depth: int) -> Node:
        if depth > _MAX_DEPTH:
            raise UnsupportedSchema("schema nests too deeply (recursive $ref?)")
        if not isinstance(schema, dict):
            raise UnsupportedSchema(f"not a schema: {schema!r}")
        if "$ref" in schema:
            return self.node(self._resolve(schema["$ref"]), depth + 1)
        if "const" in schema:
            return Literal((_json(schema["const"]),))
        if "enum" in schema:
            values = schema["enum"]
            if not isinstance(values, list) or not values:
                raise UnsupportedSchema("enum must be a non-empty list")
            return Literal(tuple(dict.fromkeys(_json(value) for value in values)))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                branches = schema[key]
                if not isinstance(branches, list) or not branches:
                    raise UnsupportedSchema(f"{key} must be a non-empty list")
                return _choice(tuple(self.node(branch, depth + 1) for branch in branches))
        unknown = set(schema) - _IGNORED_KEYS - _KNOWN_KEYS
        if unknown:
            raise UnsupportedSchema(f"unsupported keywords: {sorted(unknown)}")
        declared = schema.get("type")
        if isinstance(declared, list):
            return _choice(tuple(self.typed(schema, kind, depth) for kind in declared))
        if not isinstance(declared, str):
            raise UnsupportedSchema("a schema without a type")
        return self.typed(schema, declared, depth)

    def typed(self, schema: dict[str, Any], kind: Any, depth: int) -> Node:
        if kind == "null":
            return Literal(("null",))
        if kind == "boolean":
            return Literal(("true", "false"))
        if kind == "string":
            template = schema.get("x-evigate-sequence")
            if isinstance(template, str) and "{n}" in template:
                return Sequential(template)
            if "format" in schema:
                raise UnsupportedSchema("string formats are not supported")
            pattern = schema.get("pattern")
            limit = _int(schema.get("maxLength"), PATTERN_STRING_LIMIT if pattern else DEFAULT_STRING_LIMIT)
            return FreeString(max_length=limit, min_length=_int(schema.get("minLength"), 0), pattern=pattern)
        if kind in ("integer", "number"):  # numbers are written as integers: valid for both
            minimum, maximum = schema.get("minimum"), schema.get("maximum")
            if "exclusiveMinimum" in schema or "exclusiveMaximum" in schema or "multipleOf" in schema:
                raise UnsupportedSchema("exclusive bounds and multipleOf are not supported")
            return Integer(_ceil(minimum), _floor(maximum))
        if kind == "array":
            if "items" not in schema or not isinstance(schema["items"], dict):
                raise UnsupportedSchema("arrays need one `items` schema")
            min_items = _int(schema.get("minItems"), 0)
            max_items = _int(schema.get("maxItems"), max(min_items, 8))
            if max_items < min_items:
                raise UnsupportedSchema("maxItems below minItems")
            unique = schema.get("uniqueItems") is True
            item = self.node(schema["items"], depth + 1)
            if unique and not isinstance(item, Literal | Integer):
                raise UnsupportedSchema("uniqueItems is supported for enum and integer items only")
            return Array(item, min_items, max_items, unique)
        if kind == "object":
            properties = schema.get("properties") or {}
            if not isinstance(properties, dict):
                raise UnsupportedSchema("properties must be an object")
            if not properties and schema.get("additionalProperties", True) is not False:
                raise UnsupportedSchema("free-form objects (a mapping of any keys) are not supported")
            required = schema.get("required") or []
            missing = [name for name in required if name not in properties]
            if missing:
                raise UnsupportedSchema(f"required properties without a schema: {missing}")
            return Object(
                tuple((name, self.node(properties[name], depth + 1)) for name in properties if name in required)
            )
        raise UnsupportedSchema(f"unsupported type {kind!r}")

    def _resolve(self, reference: Any) -> Any:
        if not isinstance(reference, str) or not reference.startswith("#/"):
            raise UnsupportedSchema(f"only local references are supported, got {reference!r}")
        target: Any = self.root
        for part in reference[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or part not in target:
                raise UnsupportedSchema(f"unresolvable reference {reference!r}")
            target = target[part]
        return target


_KNOWN_KEYS = frozenset(
    {"type", "properties", "required", "items", "minItems", "maxItems", "maxLength", "minLength", "pattern",
     "minimum", "maximum", "format", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems",
     "x-evigate-sequence"}
)  # fmt: skip


def _choice(branches: tuple[Node, ...]) -> Node:
    if all(isinstance(branch, Literal) for branch in branches):  # e.g. a nullable enum: one set of texts
        texts = tuple(dict.fromkeys(text for branch in branches for text in branch.texts))  # type: ignore[union-attr]
        return Literal(texts)
    unique = tuple(dict.fromkeys(branches))
    return unique[0] if len(unique) == 1 else Choice(unique)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _int(value: Any, default: int) -> int:
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise UnsupportedSchema(f"a length bound must be a non-negative integer, got {value!r}")
    return value


def _ceil(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UnsupportedSchema(f"a numeric bound must be a number, got {value!r}")
    return int(-(-value // 1))


def _floor(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UnsupportedSchema(f"a numeric bound must be a number, got {value!r}")
    return int(value // 1)
