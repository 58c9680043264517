"""A JSON schema as a one-line example of the value it describes: what a model reads instead of the schema.

DSPy's JSON adapter prints every output field's full JSON schema into the system prompt (~800 tokens for the
Executor's, escaped inside a JSON string). A model whose decoding enforces the schema anyway needs only its shape;
on the 2-core CPU measured here every token of the fixed prompt also slows each later token (attention), so the
shorter prompt is faster to answer, not only to read. Pure: no I/O, no DSPy.

    {"claims": [{"claim_id": "claim-1", "claim_type": "symptom|root_cause", "claim_text": "<text>"}]}
"""

from __future__ import annotations

import json
from typing import Any

_MAX_DEPTH = 12


def sketch(schema: dict[str, Any]) -> str:
    """`schema` as an example JSON text: placeholders in angle brackets, enums as `a|b`, lists with one item.

    Every property is shown: sketch the schema the decoder works from (DSPy's response format, bounded), in which
    every property is required and the ones a model should not write are already removed.
    """
    return _render(schema, schema, 0)


def _render(node: Any, root: dict[str, Any], depth: int) -> str:
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return '"<value>"'
    if "$ref" in node:
        return _render(_resolve(root, node["$ref"]), root, depth + 1)
    if "const" in node:
        return _dump(node["const"])
    if "enum" in node:
        return _dump("|".join(str(value) for value in node["enum"]))
    branches = node.get("anyOf") or node.get("oneOf")
    if branches:
        kept = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")] or branches
        return _render(kept[0], root, depth + 1)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        properties = node.get("properties") or {}
        return (
            "{"
            + ", ".join(f"{_dump(name)}: {_render(child, root, depth + 1)}" for name, child in properties.items())
            + "}"
        )
    if kind == "array":
        return "[" + _render(node.get("items") or {}, root, depth + 1) + "]"
    if kind in ("integer", "number"):
        return "0"
    if kind == "boolean":
        return "true|false"
    description = node.get("description") or node.get("title") or "text"
    return _dump(f"<{description}>")


def _resolve(root: dict[str, Any], reference: Any) -> Any:
    target: Any = root
    if not isinstance(reference, str) or not reference.startswith("#/"):
        return {}
    for part in reference[2:].split("/"):
        target = target.get(part, {}) if isinstance(target, dict) else {}
    return target


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
