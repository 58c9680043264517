"""Ceilings: the best label code lets a claim get, from the Executor output alone (docs/confirmation.md §2).

Pure code: no I/O, no DSPy. A model's label (and code's, where code confirms) is lowered to the claim's ceiling:

* ``indirect`` — its Executor marked it ``support_level=indirect``;
* ``causal`` — a root_cause claim or causal wording that no cited excerpt itself states;
* ``knowledge_only`` — a critical claim citing only knowledge documents (the runbook, not the incident);
* ``window`` — a count its cited excerpt (or, given the session, the output it cites) gives for one window
  ("rejected=95 in last 10s"), stated without that window: one window's count made the whole period's is
  ``overstated`` at most (``evigate.rules.text.counts``);
* ``identifier`` — a number stated as a count ("88412 次") that its evidence gives only as a record's id
  ("order=88412", ``records.only_record_id``): ``unsupported``.

A capped claim can never be a direct observation itself; where its excerpt is a returned line, code states that
line instead (``junk_claims.add_excerpt_observations``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from evigate.rules.contract import (
    binding_ids,
    claim_key,
    claim_text,
    claim_type,
    excerpt_of,
    iter_bindings,
    iter_claims,
    support_level,
    tool_of,
)
from evigate.rules.gate.observed import KNOWLEDGE_TOOLS, is_knowledge_tool
from evigate.rules.gate.session import InvocationView, SessionIndex
from evigate.rules.text.counts import drops_window, identifier_counted
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.normalize import fold
from evigate.rules.text.phrases import ROOT_CAUSE, states_root_cause
from evigate.rules.text.words import stopwords, terms
from evigate.rules.thresholds import THRESHOLDS
from evigate.signatures import CRITICAL_CLAIM_TYPES, ClaimVerification

CEILING: ClaimVerification = "reasonable_inference"
FAVOURABLE = ("direct_observation", "reasonable_inference", "overstated", "unsupported", "external_unknown",
              "contradicted")
"""Most favourable first."""

CeilingReason = Literal["indirect", "causal", "knowledge_only", "window", "identifier"]
CEILING_WHY: dict[CeilingReason, str] = {
    "indirect": "its Executor marked it support_level=indirect",
    "causal": "it states a cause that no cited excerpt itself states",
    "knowledge_only": "it cites only knowledge documents, which show the runbook, not the incident",
    "window": "it states a count its evidence gives for one window only, without that window",
    "identifier": "it states as a count a number its evidence gives only as a record's id (an order number)",
}


def is_causal(claim: Mapping[str, Any]) -> bool:
    """A root_cause claim, or a claim with causal wording (因为 / 导致 / 由于 / 造成 / because / caused by / …)."""
    return claim_type(claim) == "root_cause" or bool(ROOT_CAUSE.search(fold(claim_text(claim))))


def _excerpts(claim: Mapping[str, Any]) -> list[str]:
    return [excerpt_of(binding) for _, binding in iter_bindings(claim)]


def _excerpt_states_cause(claim: Mapping[str, Any]) -> bool:
    """The cited output itself states the claim's cause.

    Either one excerpt says it in causal words and holds every entity of the claim, or the claim's two sides (the
    text before and after its causal wording) are both quoted from ONE invocation (a Kubernetes "Evicted" record
    and its message "The node was low on resource"): one record reported effect and cause together. Sides quoted
    from different invocations are a link the model drew itself, so they stay capped.
    """
    text = claim_text(claim)
    entities = extract_entities(text)
    for excerpt in _excerpts(claim):
        if states_root_cause(excerpt) and all(entity_occurs(entity, excerpt) for entity in entities):
            return True
    folded = fold(text)
    match = ROOT_CAUSE.search(folded)
    if match is None:
        return False
    sides = [_units(folded[: match.start()]), _units(folded[match.end():])]
    if not all(sides):
        return False
    by_invocation: dict[int, list[str]] = {}
    for _, binding in iter_bindings(claim):
        ids = binding_ids(binding)
        if len(ids) == 1:
            by_invocation.setdefault(ids[0], []).append(fold(excerpt_of(binding)))
    for excerpts in by_invocation.values():
        quoted = " ".join(excerpts)
        if all(sum(unit in quoted for unit in side) >= SIDE_COVERAGE * len(side) for side in sides):
            return True
    return False


_UNIT_JOINERS = "./:-"
"""A path, URL, version or duration (/api/pay, 5.3s) is one unit."""
_STOPWORDS = stopwords("core", "function")
SIDE_COVERAGE = THRESHOLDS.confirmation.side_coverage
"""Share of a side's words (ASCII words of 3+ characters, CJK bigrams) its excerpts must quote."""


def _units(folded: str) -> list[str]:
    """The words (3+ characters, stopwords left out) and CJK character pairs of folded text."""
    return [unit for unit in terms(folded, _UNIT_JOINERS, min_chars=3) if unit not in _STOPWORDS]


@dataclass(frozen=True)
class Ceiling:
    """The most favourable label code allows for one claim, and why."""

    verification: ClaimVerification
    reason: CeilingReason

    @property
    def why(self) -> str:
        return CEILING_WHY[self.reason]


def cited_views(session: SessionIndex, claim: Mapping[str, Any]) -> list[InvocationView]:
    """Successful invocations of this session the claim's bindings cite, with the binding's tool name."""
    views: dict[int, InvocationView] = {}
    for _, binding in iter_bindings(claim):
        tool = tool_of(binding)
        for view in session.resolve(binding_ids(binding)):
            if view.success and view.tool_name == tool:
                views[view.id] = view
    return list(views.values())


def ceilings_of(
    normalized: Mapping[str, Any] | None, knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS,
    session: SessionIndex | None = None,
) -> dict[str, Ceiling]:
    """Claim id → the best label it may get, for every claim code caps (see the module docstring). With the
    ``session``, a count is also read in the outputs the claim cites, not only in its excerpts."""
    knowledge = tuple(knowledge_tools)
    ceilings: dict[str, Ceiling] = {}
    for index, claim in iter_claims(normalized):
        key = claim_key(claim, index)
        tools = [tool_of(binding) for _, binding in iter_bindings(claim)]
        if support_level(claim) == "indirect":
            ceilings[key] = Ceiling(CEILING, "indirect")
        elif is_causal(claim) and not _excerpt_states_cause(claim):
            ceilings[key] = Ceiling(CEILING, "causal")
        elif (claim_type(claim) in CRITICAL_CLAIM_TYPES and tools
              and all(is_knowledge_tool(tool, knowledge) for tool in tools)):
            ceilings[key] = Ceiling(CEILING, "knowledge_only")
        else:
            evidence = [*_excerpts(claim), *(text for view in (cited_views(session, claim) if session else [])
                                            for text in view.returned)]
            if identifier_counted(claim_text(claim), evidence):
                ceilings[key] = Ceiling("unsupported", "identifier")
            elif drops_window(claim_text(claim), evidence):
                ceilings[key] = Ceiling("overstated", "window")
    return ceilings



def cap(verification: ClaimVerification, ceiling: Ceiling | None) -> ClaimVerification:
    """``verification``, lowered to the ceiling when it is more favourable."""
    if ceiling is None or FAVOURABLE.index(verification) >= FAVOURABLE.index(ceiling.verification):
        return verification
    return ceiling.verification

