"""Per-session evidence index: the texts of the tool invocations, built lazily and once.

Invocations are immutable, so everything derived from them (flattened details, folded previews, joined haystacks)
is computed on first use and kept; a Gatekeeper reuses the index across the rounds of one diagnosis. Exact
substring search on raw text comes first everywhere: folding 20 KB costs more than the search it would serve.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any

# The tolerant views of executor output live with the contract's field names; re-exported for older importers.
from evigate.rules.contract import as_invocation_id as as_invocation_id
from evigate.rules.contract import binding_ids as binding_ids
from evigate.rules.contract import claim_key as claim_key
from evigate.rules.contract import iter_bindings as iter_bindings
from evigate.rules.contract import iter_claims as iter_claims
from evigate.rules.contract import text_of as text_of
from evigate.rules.text.entities import Entity, entity_occurs
from evigate.rules.text.instructions import packed_lines
from evigate.rules.text.normalize import compact, fold
from evigate.rules.text.occurrence import compared_across_units
from evigate.signatures import ToolInvocation, ToolTraceEntry
from evigate.signatures.preview import split_preview

MAX_FLATTEN_CHARS = 200_000
"""Retrieval details beyond this many characters are not searched (bounds the cost of hostile rows)."""


def flatten(value: Any, *, limit: int = MAX_FLATTEN_CHARS) -> str:
    """Searchable text of a JSON-like value (JSON text, at C speed); a value JSON cannot encode is walked instead."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:limit]
    except (TypeError, ValueError, RecursionError):
        return _walk(value, limit=limit)


def _walk(value: Any, *, limit: int) -> str:
    """Plain text of any nested value: ``key: value`` lines, lists one item a line."""
    lines: list[str] = []
    size = 0
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack and size < limit:
        prefix, item, depth = stack.pop()
        if isinstance(item, Mapping) and depth < 32:
            stack.extend((f"{key}: ", child, depth + 1) for key, child in reversed(list(item.items())))
        elif isinstance(item, list | tuple) and depth < 32:
            if prefix:
                lines.append(prefix)
            stack.extend(("", child, depth + 1) for child in reversed(item))
        else:
            text = prefix + ("" if item is None else item if isinstance(item, str) else json.dumps(item, default=str))
            lines.append(text)
            size += len(text) + 1
    return "\n".join(lines)[:limit]


class InvocationView:
    """One tool invocation with its searchable texts, built lazily and kept (invocations are immutable)."""

    def __init__(self, invocation: ToolInvocation) -> None:
        self.invocation = invocation
        self.id = invocation.id
        self.session_id = invocation.session_id
        self.tool_name = invocation.tool_name
        self.success = invocation.success
        kept, dropped = split_preview(invocation.output_preview or "")
        whole = invocation.output if dropped and invocation.output else None
        if whole is not None:
            kept, dropped = split_preview(whole)  # the whole output may itself have been capped by the Toolbox
        # What the call returned, as far as it is known: the whole output where the store kept it for a cut
        # preview, else the preview without its truncation marker (the marker is no evidence).
        self.raw_preview = kept
        # Whether the real output went on past raw_preview: only evigate's marker says so, never a bare "…".
        self.truncated = dropped > 0

    @cached_property
    def input_core(self) -> str:
        """The call's arguments, flattened, case-folded and compacted: what it was asked (built once)."""
        return compact(fold(flatten(self.invocation.input))) if self.invocation.input else ""

    @cached_property
    def returned(self) -> tuple[str, ...]:
        """What it returned: its preview and retrieval details, as written (never its input or error)."""
        return tuple(part for part in (self.raw_preview, self.raw_details) if part)

    @cached_property
    def returned_cores(self) -> tuple[str, ...]:
        """What it returned (``returned``), each case-folded and compacted: for verbatim tests that ignore case,
        spaces and punctuation (built once, not per claim)."""
        return tuple(packed_lines(part).replace("\n", "") for part in self.returned)

    @cached_property
    def raw_details(self) -> str:
        details = self.invocation.retrieval_details
        return flatten(details) if details else ""

    @cached_property
    def raw_extras(self) -> tuple[str, ...]:
        """Retrieval details, input, error message and tool name: with the preview, where an entity may
        legitimately come from ("according to fetch_pod_logs, …" names the tool that ran).

        Kept apart rather than joined (copying 20 KB per invocation costs more than searching four strings) and
        built only when a search gets past the previews.
        """
        parts = (self.raw_details, flatten(self.invocation.input) if self.invocation.input else "",
                 self.invocation.error or "", self.tool_name)
        return tuple(part for part in parts if part)


def as_view(item: ToolInvocation | Mapping[str, Any]) -> InvocationView | None:
    """A view of a recorded invocation (a model or a row mapping); None for a row that is no invocation."""
    if isinstance(item, ToolInvocation):
        return InvocationView(item)
    try:
        return InvocationView(ToolInvocation.model_validate(item))
    except Exception:  # a malformed row is no evidence; it must not crash the gate
        return None


def _as_trace(item: ToolTraceEntry | Mapping[str, Any]) -> ToolTraceEntry | None:
    if isinstance(item, ToolTraceEntry):
        return item
    try:
        return ToolTraceEntry.model_validate(item)
    except Exception:
        return None


MAX_EVIDENCE_NAMED = 8
"""Entries of ``evidence_named`` read (the census names one code; the domain reads a few services and metrics in a
question, ``Plan.question_read``)."""
MAX_NAME_CHARS = 120


class SessionIndex:
    """The invocations a gate may consult, split into this session's and other sessions' rows."""

    def __init__(
        self,
        invocations: Iterable[ToolInvocation | Mapping[str, Any]],
        session_id: str,
        trace_summary: Iterable[ToolTraceEntry | Mapping[str, Any]] | None = None,
        query: str = "",
        view_of: Callable[[ToolInvocation | Mapping[str, Any]], InvocationView | None] | None = None,
        evidence_named: Iterable[str] = (),
    ) -> None:
        """``view_of`` lets a caller reuse views (and their built texts) across the indexes of several rounds.
        ``evidence_named``: what the evidence named for the question when the question did not (``Plan.
        evidence_named``: the census's error code), read like the question's own anchors."""
        self.session_id = session_id
        self.by_id: dict[int, InvocationView] = {}
        for item in invocations or ():
            view = (view_of or as_view)(item)
            if view is None:
                continue
            known = self.by_id.get(view.id)
            if known is None or (known.session_id != session_id and view.session_id == session_id):
                self.by_id[view.id] = view
        self.in_session = [view for view in self.by_id.values() if view.session_id == session_id]
        self.trace = [entry for entry in (_as_trace(item) for item in trace_summary or ()) if entry is not None]
        self.query = query or ""
        # Bounded: a plan may come from an injected planner, and every entry is searched in every returned line.
        self.evidence_named = tuple(str(name)[:MAX_NAME_CHARS] for name in list(evidence_named)[:MAX_EVIDENCE_NAMED])
        self._occurs_cache: dict[tuple[Entity, frozenset[int] | None], bool] = {}

    @cached_property
    def trace_output_by_invocation(self) -> dict[int, str]:
        """``output_summary`` of the trace entries that list each invocation id."""
        summaries: dict[int, list[str]] = {}
        for entry in self.trace:
            for invocation_id in entry.source_invocation_ids:
                summaries.setdefault(invocation_id, []).append(entry.output_summary)
        return {key: "\n".join(value) for key, value in summaries.items()}

    def resolve(self, ids: Iterable[int]) -> list[InvocationView]:
        """The invocations of this session among ``ids`` (unknown and foreign ids are dropped)."""
        views = []
        for invocation_id in ids:
            view = self.by_id.get(invocation_id)
            if view is not None and view.session_id == self.session_id:
                views.append(view)
        return views

    def bound_parts(self, views: Sequence[InvocationView]) -> Iterator[str]:
        """The texts of the given invocations (previews first, then details, input, error) and their trace summaries."""
        unique = {view.id: view for view in views}
        for view in unique.values():
            yield view.raw_preview
        for view in unique.values():
            yield from view.raw_extras
        trace = self.trace_output_by_invocation
        yield from (trace[i] for i in unique if i in trace)

    def occurs_in_bound(self, entity: Entity, views: Sequence[InvocationView]) -> bool:
        """Whether an entity occurs in the cited invocations (memoised per entity and set of invocations)."""
        if not views:
            return False
        key = (entity, frozenset(view.id for view in views))
        found = self._occurs_cache.get(key)
        if found is None:
            found = _occurs_in(entity, lambda: self.bound_parts(views))
            self._occurs_cache[key] = found
        return found

    def occurs_in_session(self, entity: Entity) -> bool:
        """Whether an entity occurs anywhere in this session's evidence, inputs, trace summary or query."""
        key = (entity, None)
        found = self._occurs_cache.get(key)
        if found is None:
            found = _occurs_in(entity, self._session_parts)
            self._occurs_cache[key] = found
        return found

    def _session_parts(self) -> Iterator[str]:
        for view in self.in_session:  # previews first: most entities are found before any details are flattened
            yield view.raw_preview
        for view in self.in_session:
            yield from view.raw_extras
        for entry in self.trace:
            yield f"{entry.input_summary}\n{entry.output_summary}"
        yield self.query


def _occurs_in(entity: Entity, parts: Callable[[], Iterable[str]]) -> bool:
    """Whether an entity occurs in any of the texts: plain finds in all of them first, then (for a number with a
    unit) each text's numbers compared by value. Same answer as one pass; a value found as written in the 30th
    output no longer costs parsing every number of the 29 before it."""
    if any(entity_occurs(entity, part, across_units=False) for part in parts()):
        return True
    return compared_across_units(entity) and any(entity_occurs(entity, part) for part in parts())

