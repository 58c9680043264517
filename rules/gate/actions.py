"""The user-visible texts of an executor output beyond claims' evidence: what the action and gap rules read.

Actions (recommended_actions) and gaps (missing_info) reach the final answer as written, so they are checked like
claims: by field path (``recommended_actions[0].action_text``, ``missing_info[1]``), so the composer input can drop
exactly what a rule flagged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from evigate.rules.contract import (
    ACTIONS,
    HYPOTHESES,
    ITEM_TEXTS,
    MISSING_INFO,
    NEEDED_EVIDENCE,
    binding_ids,
    iter_bindings,
)
from evigate.rules.gate.session import InvocationView, SessionIndex

ActionField = str
"""One of ``claims``, ``hypotheses``, ``recommended_actions``, ``missing_info``."""
ITEM_TARGET = re.compile(rf"^({ACTIONS}|{MISSING_INFO}|{HYPOTHESES})\[(\d+)\]")


def iter_user_texts(
    data: Mapping[str, Any] | None, fields: Sequence[ActionField]
) -> Iterator[tuple[str, str, Mapping[str, Any] | None]]:
    """(target path, text, the object holding it or None) for every non-empty text of the chosen fields."""
    if not isinstance(data, Mapping):
        return
    for name in fields:
        items = data.get(name)
        if not isinstance(items, list):
            continue
        for index, item in enumerate(items):
            if isinstance(item, str):
                if item.strip():
                    yield f"{name}[{index}]", item, None
                continue
            if not isinstance(item, Mapping):
                continue
            for key in ITEM_TEXTS:
                value = item.get(key)
                if isinstance(value, str) and value.strip():
                    yield f"{name}[{index}].{key}", value, item
            needed = item.get(NEEDED_EVIDENCE)
            for position, value in enumerate(needed if isinstance(needed, list) else []):
                if isinstance(value, str) and value.strip():
                    yield f"{name}[{index}].{NEEDED_EVIDENCE}[{position}]", value, item


def tool_outputs(session: SessionIndex, exclude_tools: Sequence[str] = ()) -> list[str]:
    """The previews and retrieval details of this session's invocations, except those of ``exclude_tools``."""
    texts: list[str] = []
    for view in session.in_session:
        if view.tool_name in exclude_tools:
            continue
        texts.append(view.raw_preview)
        if view.raw_details:
            texts.append(view.raw_details)
    return texts


def cited_output_cores(session: SessionIndex, item: Mapping[str, Any] | None, exclude_tools: Sequence[str] = ()
                       ) -> list[tuple[str, str]]:
    """(text, its folded and compacted form) for the previews and retrieval details of the invocations an item's
    bindings cite, except those of ``exclude_tools`` (the compacted forms are the session index's, built once)."""
    pairs: list[tuple[str, str]] = []
    if item is None:
        return pairs
    for _, binding in iter_bindings(item):
        for view in session.resolve(binding_ids(binding)):
            if view.tool_name in exclude_tools:
                continue
            parts = list(view.returned)
            pairs.extend(zip(parts, view.returned_cores, strict=True))
    return pairs


def cited_knowledge(session: SessionIndex, item: Mapping[str, Any] | None, knowledge_tools: Sequence[str]
                    ) -> list[InvocationView]:
    """The successful knowledge-document invocations of this session that an action's own bindings cite."""
    if item is None:
        return []
    views = []
    for _, binding in iter_bindings(item):
        for view in session.resolve(binding_ids(binding)):
            if view.tool_name in knowledge_tools and view.success:
                views.append(view)
    return views


def flagged_items(errors: Sequence[Any]) -> dict[str, set[int]]:
    """field name → indexes of the actions, gaps and hypotheses any Gatekeeper error targets."""
    flagged: dict[str, set[int]] = {}
    for error in errors:
        target = getattr(error, "target", None)
        if target is None and isinstance(error, Mapping):
            target = error.get("target")
        match = ITEM_TARGET.match(target) if isinstance(target, str) else None
        if match:
            flagged.setdefault(match.group(1), set()).add(int(match.group(2)))
    return flagged
