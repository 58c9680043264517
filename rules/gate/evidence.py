"""Helpers the evidence rules share: which invocations a binding cites, and memoised excerpt scores."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evigate.rules.contract import binding_ids, excerpt_of, iter_bindings, iter_claims
from evigate.rules.gate.base import RuleContext
from evigate.rules.gate.session import InvocationView
from evigate.rules.text.entities import Entity, extract_entities
from evigate.rules.text.normalize import excerpt_similarity
from evigate.rules.text.words import terms

EvidenceSource = Literal["output_preview", "retrieval_details", "tool_trace_summary"]
_PROBE_JOINERS = "._%-"
"""A probe token is a value as written (5.3s, 92%, -0.5, pay-gateway): it is looked up verbatim in raw outputs."""


@dataclass(frozen=True)
class CitedExcerpt:
    """One claim binding with a non-empty excerpt and the session invocations it cites."""

    target: str
    excerpt: str
    views: list[InvocationView]


def cited_excerpts(context: RuleContext) -> Iterator[CitedExcerpt]:
    """Every claim binding whose excerpt can be compared with real calls (what the excerpt rules judge)."""
    for claim_index, claim in iter_claims(context.data):
        for binding_index, binding in iter_bindings(claim):
            excerpt = excerpt_of(binding)
            views = cited_views(context, binding)
            if excerpt.strip() and views:
                target = f"claims[{claim_index}].evidence_bindings[{binding_index}].evidence_excerpt"
                yield CitedExcerpt(target, excerpt, views)


def cited_views(context: RuleContext, binding: Mapping[str, Any]) -> list[InvocationView]:
    """The invocations of this session a binding cites (unknown or foreign ids are invocation_ref's business).

    Memoised by the binding object: every evidence rule asks, and the data does not change during a validation.
    """
    key = ("cited", id(binding))
    cached = context.memo.get(key)
    if cached is None or cached[0] is not binding:
        cached = (binding, context.session.resolve(binding_ids(binding)))
        context.memo[key] = cached
    return cached[1]


def haystacks(
    context: RuleContext, view: InvocationView, compare_against: Sequence[str]
) -> list[tuple[str, bool]]:
    """The texts of one invocation an excerpt may be compared with, each with its truncated flag."""
    found: list[tuple[str, bool]] = []
    if "output_preview" in compare_against and view.raw_preview:
        found.append((view.raw_preview, view.truncated))
    if "retrieval_details" in compare_against and view.raw_details:
        found.append((view.raw_details, False))
    if "tool_trace_summary" in compare_against:
        summary = context.session.trace_output_by_invocation.get(view.id)
        if summary:
            found.append((summary, False))
    return found


def _raw_sources(context: RuleContext, view: InvocationView, compare_against: Sequence[str]) -> list[str]:
    sources = []
    if "output_preview" in compare_against:
        sources.append(view.raw_preview)
    if "retrieval_details" in compare_against:
        sources.append(view.raw_details)
    if "tool_trace_summary" in compare_against:
        sources.append(context.session.trace_output_by_invocation.get(view.id, ""))
    return sources


def excerpt_score(
    context: RuleContext,
    excerpt: str,
    views: Sequence[InvocationView],
    compare_against: Sequence[str],
) -> float:
    """Best similarity of an excerpt with the given invocations, memoised for the validation."""
    key = ("excerpt", excerpt, tuple(view.id for view in views), tuple(compare_against))
    score = context.memo.get(key)
    if score is None:
        verbatim = excerpt.strip()
        if verbatim and any(verbatim in raw for view in views for raw in _raw_sources(context, view, compare_against)):
            score = 1.0  # a verbatim copy: no need to fold 20 KB of output
            context.memo[("verbatim", excerpt, tuple(view.id for view in views))] = True
        else:
            sources = [hay for view in views for hay in haystacks(context, view, compare_against)]
            score = excerpt_similarity(excerpt, sources)
        context.memo[key] = score
    return score


def is_verbatim(context: RuleContext, excerpt: str, views: Sequence[InvocationView]) -> bool:
    """Whether :func:`excerpt_score` found the excerpt verbatim in the cited outputs (so its values are there too)."""
    return bool(context.memo.get(("verbatim", excerpt, tuple(view.id for view in views))))


def claim_entities(context: RuleContext, text: str) -> list[Entity]:
    """The entities of a claim or excerpt text, read with the gate's vocabulary and memoised (several rules ask)."""
    key = ("entities", text)
    entities = context.memo.get(key)
    if entities is None:
        entities = extract_entities(text, context.vocabulary)
        context.memo[key] = entities
    return entities


def distinctive_tokens(excerpt: str, limit: int = 12) -> list[str]:
    """The longest word-like tokens (latin runs as written, CJK pairs) of an excerpt, for cheap candidate filtering."""
    # Longest first; among equally long ones, first written first (a set's order would vary between processes).
    tokens = dict.fromkeys(terms(excerpt, _PROBE_JOINERS, min_chars=3, strip=False))
    return sorted(tokens, key=len, reverse=True)[:limit]


def format_ids(views: Sequence[InvocationView]) -> str:
    """``394 (query_logs), 395 (query_metrics)``."""
    return ", ".join(f"{view.id} ({view.tool_name})" for view in views)
