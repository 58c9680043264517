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
        field_limits: (property name, limit) pairs: wherever a property of that name is a string or an array,
            its `maxLength`/`maxItems` is at most the limit (tighter than the defaults, never looser than a
            declared minimum); `name[]` limits the items of an array property instead (e.g. the length of
            each string in a list); `Title.name` applies only inside objects of that title. Generation time
            grows with every token a small model writes and it fills lists to their limit, so the few fields
            that carry the content get their own, smaller limits.
        omit_fields: properties removed from the schema (and from `required`): fields the contract defaults (e.g.
            an evidence binding's `source_type`) cost tokens and add nothing. DSPy's JSON adapter marks every
            property required, so being required says nothing here; only name what the contract can default.
            A name applies wherever it occurs; `Title.name` only inside objects of that title.
        field_enums: (property name, allowed values) pairs, named like `field_limits`: the field (or, for
            `name[]`, each item) may only take those values. Usually per call (`evigate.llm.constraints`).
        object_variants: (`$defs` title, choices) pairs: such an object becomes `anyOf` copies of itself, each with
            one choice's enums, so values that belong together (a tool and its invocation ids) stay together.
    """

    max_string_length: int = 512
    max_array_items: int = 8
    close_objects: bool = True
    ceiling: int = 1000
    field_limits: tuple[tuple[str, int], ...] = ()
    omit_fields: frozenset[str] = frozenset()
    field_enums: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    object_variants: tuple[tuple[str, tuple[tuple[tuple[str, tuple[Any, ...]], ...], ...]], ...] = ()

    def __post_init__(self) -> None:
        for name in ("max_string_length", "max_array_items"):
            value = getattr(self, name)
            if not 1 <= value <= self.ceiling:
                raise ValueError(f"{name} must be between 1 and {self.ceiling}, got {value}")
        for field, limit in self.field_limits:
            if not _is_int(limit) or not 1 <= limit <= self.ceiling:
                raise ValueError(f"field limit for {field!r} must be between 1 and {self.ceiling}, got {limit!r}")

    @classmethod
    def create(
        cls,
        *,
        field_limits: dict[str, int] | None = None,
        omit_fields: list[str] | tuple[str, ...] | frozenset[str] | None = None,
        field_enums: dict[str, list[Any]] | None = None,
        object_variants: dict[str, list[dict[str, list[Any]]]] | None = None,
        **options: Any,
    ) -> SchemaBounds:
        """Build from plain settings values (mappings and a list), as YAML and `dump_state` hold them."""
        return cls(
            field_limits=tuple(sorted((field_limits or {}).items())),
            omit_fields=frozenset(omit_fields or ()),
            field_enums=tuple(sorted((name, tuple(values)) for name, values in (field_enums or {}).items())),
            object_variants=tuple(
                (title, tuple(tuple(sorted((f, tuple(v)) for f, v in choice.items())) for choice in choices))
                for title, choices in sorted((object_variants or {}).items())
            ),
            **options,
        )


def bound_json_schema(schema: JsonSchema, bounds: SchemaBounds | None = None) -> JsonSchema:
    """Return a deep copy of `schema` in which every string, array and object is bounded.

    Existing limits are kept; a default never undercuts a declared minimum (`minLength`/`minItems`).
    `$ref` targets are bounded where they are defined (`$defs`/`definitions`), so references stay valid.
    """
    if not isinstance(schema, dict):
        raise TypeError(f"a JSON schema must be an object, got {type(schema).__name__}")
    bounded = copy.deepcopy(schema)
    bounds = bounds or SchemaBounds()
    _split_variants(bounded, dict(bounds.object_variants))
    _bound_in_place(bounded, bounds)
    return bounded


def _split_variants(schema: JsonSchema, variants: dict[str, Any]) -> None:
    if not variants:
        return
    for key in ("$defs", "definitions"):
        definitions = schema.get(key)
        if not isinstance(definitions, dict):
            continue
        for name, definition in list(definitions.items()):
            choices = variants.get(definition.get("title")) if isinstance(definition, dict) else None
            if not choices:
                continue
            copies = []
            for choice in choices:
                variant = copy.deepcopy(definition)
                properties = variant.get("properties") or {}
                for field, values in choice:
                    target = (
                        properties.get(field[:-2], {}).get("items") if field.endswith("[]") else properties.get(field)
                    )
                    _apply_enum(target, values)
                copies.append(variant)
            definitions[name] = {"anyOf": copies, "title": definition.get("title")}


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
    properties = node.get("properties")
    if isinstance(properties, dict):
        _omit_fields(node, properties, bounds.omit_fields)
        title = node.get("title")
        limits, enums = dict(bounds.field_limits), dict(bounds.field_enums)
        for name, child in properties.items():
            if not isinstance(child, dict):
                continue
            for key, target in ((name, child), (f"{name}[]", child.get("items"))):
                limit = _named(limits, title, key)
                if limit is not None:
                    _apply_field_limit(target, limit)
                values = _named(enums, title, key)
                if values is not None:
                    _apply_enum(target, values)
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


def _omit_fields(node: JsonSchema, properties: dict[str, Any], omit: frozenset[str]) -> None:
    title = node.get("title")
    for name in [name for name in properties if name in omit or f"{title}.{name}" in omit]:
        del properties[name]
        if isinstance(node.get("required"), list):
            node["required"] = [kept for kept in node["required"] if kept != name]


def _apply_field_limit(node: Any, limit: int) -> None:
    """Set a field's own limit before the defaults run (they keep a limit that is already there)."""
    if not isinstance(node, dict):
        return
    for branch in node.get("anyOf") or node.get("oneOf") or ():
        _apply_field_limit(branch, limit)
    types = _types_of(node)
    if "string" in types and not any(k in node for k in _STRING_SHAPE_KEYS):
        node["maxLength"] = _tighter(node, "maxLength", "minLength", limit)
    if "array" in types:
        node["maxItems"] = _tighter(node, "maxItems", "minItems", limit)


def _named(settings: dict[str, Any], title: Any, key: str) -> Any:
    """The setting for property `key` of an object titled `title`: `Title.key` first, then plain `key`."""
    qualified = settings.get(f"{title}.{key}") if title else None
    return qualified if qualified is not None else settings.get(key)


def _apply_enum(node: Any, values: tuple[Any, ...]) -> None:
    if isinstance(node, dict) and values:
        node["enum"] = list(values)
        for key in ("maxLength", "minLength", "pattern", "format"):
            node.pop(key, None)


def _tighter(node: JsonSchema, max_key: str, min_key: str, limit: int) -> int:
    declared = node.get(max_key)
    tighter = min(declared, limit) if _is_int(declared) else limit
    minimum = node.get(min_key)
    return max(tighter, minimum) if _is_int(minimum) else tighter


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
