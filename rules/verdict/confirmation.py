"""Code confirms quotes and caps what a model may call observed (docs/confirmation.md states the rules).

Pure code: no I/O, no DSPy. Three functions, used by the program's rounds and by evaluation alike:

* :func:`ceilings_of` — the best label each claim can get, from the Executor output alone: a claim its Executor
  marked ``indirect``, a causal statement (a ``root_cause`` claim or causal wording) that no cited excerpt itself
  states, and a critical claim that cites only knowledge documents are at most ``reasonable_inference``.
* :func:`confirm_by_code` — claims that only restate what a cited, successful invocation returned are
  ``direct_observation`` by code; the Verifier model is asked only about the rest.
* :func:`rewrite_junk_claims` — a claim whose text is junk (a question, an instruction copied from the prompt) but
  whose excerpt is verbatim in the cited output becomes the claim "<tool> 返回：<excerpt>", typed so that it can never
  carry a root cause; it then goes through the Gatekeeper like any claim.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
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
    with_claims,
)
from evigate.rules.gate.observed import KNOWLEDGE_TOOLS, is_knowledge_tool, restates_header
from evigate.rules.gate.session import InvocationView, SessionIndex
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.normalize import compact, fold, squash_whitespace, weight
from evigate.rules.text.phrases import HEDGE, ROOT_CAUSE, is_question, states_root_cause
from evigate.rules.text.words import stopwords, terms
from evigate.rules.thresholds import THRESHOLDS
from evigate.signatures import CRITICAL_CLAIM_TYPES, ClaimCheck, ClaimVerification, EvidenceRef

CEILING: ClaimVerification = "reasonable_inference"
MIN_CONFIRM_WEIGHT = THRESHOLDS.confirmation.min_confirm_weight
"""A restated text lighter than this (2 per CJK character, 1 per other character) is too generic to confirm."""
CODE_DETAIL = "confirmed by code: the claim restates the cited output of {ids} verbatim"
FAVOURABLE = ("direct_observation", "reasonable_inference", "overstated", "unsupported", "external_unknown",
              "contradicted")
"""Most favourable first."""

CeilingReason = Literal["indirect", "causal", "knowledge_only"]
CEILING_WHY: dict[CeilingReason, str] = {
    "indirect": "its Executor marked it support_level=indirect",
    "causal": "it states a cause that no cited excerpt itself states",
    "knowledge_only": "it cites only knowledge documents, which show the runbook, not the incident",
}

_SOURCE_ZH = r"(?:日志|指标|监控|订单(?:记录)?|记录|查询结果|工具(?:输出|结果)?|输出|返回结果|知识库|文档|数据)"
_VERB_ZH = r"(?:显示|表明|返回|记录了?|提示|可见|指出|写道|给出|中有|里有|报告)"
_SOURCE_EN = (r"(?:logs?|log lines?|metrics?|monitoring|order(?: record)?|records?|query(?: result)?|output|"
              r"tool output|results?|knowledge base|docs?|documentation|runbook)")
_VERB_EN = (r"(?:shows?|showed|indicates?|indicated|returned|returns|reports?|reported|records?|recorded|says|said"
            r"|states?)")
_SUBJECT = r"(?:[A-Za-z][\w\-]*\s*(?:的\s*)?)?"
_CALLED = r"(?:\s*[（(][^（）()]{1,160}[）)])?"
"""What the call was about, in brackets after the source: "query_metrics（payment-service pool_active）返回：…"."""


def _attribution(tool_names: Iterable[str]) -> re.Pattern[str]:
    tools = "|".join(re.escape(fold(name)) for name in sorted(set(tool_names), key=len, reverse=True) if name)
    source_zh = f"(?:{tools}|{_SOURCE_ZH})" if tools else _SOURCE_ZH
    source_en = f"(?:{tools}|(?:the\\s+)?{_SOURCE_EN})" if tools else f"(?:the\\s+)?{_SOURCE_EN}"
    return re.compile(
        "^(?:"
        rf"(?:根据|据|从|按照?)\s*{_SUBJECT}{source_zh}{_CALLED}\s*(?:中|里)?\s*(?:{_VERB_ZH})?"
        rf"|{_SUBJECT}{source_zh}{_CALLED}\s*(?:中|里)?\s*{_VERB_ZH}"
        rf"|(?:according to|per|as per|from)\s+{_SUBJECT}{source_en}{_CALLED}(?:\s+{_VERB_EN})?"
        rf"|{_SUBJECT}{source_en}{_CALLED}\s+{_VERB_EN}(?:\s+that)?"
        r")\s*[：:，,]?\s*",
        re.IGNORECASE,
    )


def strip_attribution(text: str, tool_names: Iterable[str] = ()) -> str:
    """The claim text, folded, without a leading attribution ("日志显示", "根据日志，", "the logs show", "X 返回：")."""
    folded = squash_whitespace(fold(text))
    return _attribution(tool_names).sub("", folded, count=1).strip()


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


def ceilings_of(
    normalized: Mapping[str, Any] | None, knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS
) -> dict[str, Ceiling]:
    """Claim id → the best label it may get, for every claim code caps (see the module docstring)."""
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
    return ceilings


def cap(verification: ClaimVerification, ceiling: Ceiling | None) -> ClaimVerification:
    """``verification``, lowered to the ceiling when it is more favourable."""
    if ceiling is None or FAVOURABLE.index(verification) >= FAVOURABLE.index(ceiling.verification):
        return verification
    return ceiling.verification


@dataclass
class CodeJudgement:
    """What code decided before the Verifier model: confirmed claims, and the claims left to the model."""

    confirmed: dict[str, ClaimCheck] = field(default_factory=dict)
    remaining: list[str] = field(default_factory=list)

    @property
    def model_needed(self) -> bool:
        return bool(self.remaining)


def _returned_texts(view: InvocationView) -> tuple[str, ...]:
    """What an invocation returned: its preview and retrieval details (never its input or error)."""
    return tuple(part for part in (view.raw_preview, view.raw_details) if part)


def _occurs(core: str, views: Sequence[InvocationView]) -> bool:
    needle = compact(core)
    return bool(needle) and any(needle in part for view in views for part in view.returned_cores)


def _cited(session: SessionIndex, claim: Mapping[str, Any]) -> list[InvocationView]:
    """Successful invocations of this session the claim's bindings cite, with the binding's tool name."""
    views: dict[int, InvocationView] = {}
    for _, binding in iter_bindings(claim):
        tool = tool_of(binding)
        for view in session.resolve(binding_ids(binding)):
            if view.success and view.tool_name == tool:
                views[view.id] = view
    return list(views.values())


def restated_by(
    claim: Mapping[str, Any], session: SessionIndex, knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS
) -> list[InvocationView]:
    """The cited invocations whose returned text the claim only restates; [] when it says more than they show."""
    text = claim_text(claim)
    if not text.strip() or is_question(text) or HEDGE.search(fold(text)) or is_causal(claim):
        return []
    views = _cited(session, claim)
    if claim_type(claim) in CRITICAL_CLAIM_TYPES:
        views = [view for view in views if not is_knowledge_tool(view.tool_name, knowledge_tools)]
    if not views:
        return []
    core = strip_attribution(text, (view.tool_name for view in views)).rstrip("。.；;！!")
    if weight(compact(core)) < MIN_CONFIRM_WEIGHT or restates_header(core, views):
        return []
    showing = [view for view in views if _occurs(core, [view])]
    if not showing:
        return []
    # Every entity of the whole text (the attribution too: "pay-gateway 日志显示 …") must be in what was returned.
    # The cited tool's own name ("query_order 返回：…") attributes the text; it is not a value the output must hold.
    tool_names = {fold(view.tool_name) for view in views}
    for entity in extract_entities(text):
        if fold(entity.text) in tool_names:
            continue
        if not any(entity_occurs(entity, part) for view in views for part in _returned_texts(view)):
            return []
    return showing


def asks_again(claim: Mapping[str, Any], session: SessionIndex) -> InvocationView | None:
    """The invocation of this session whose arguments hold the claim's whole text (minus an attribution), cited ones
    first, or None.

    Measured on the 0.5B default: "HikariCP 连接池耗尽 Connection is not available", lookup_knowledge's query, cited
    to a query_logs call, was labelled direct_observation by the Verifier and made a PASS. What evigate itself asked
    is no finding, whichever call the claim cites.
    """
    bound = [view for _, binding in iter_bindings(claim) for view in session.resolve(binding_ids(binding))]
    core = compact(strip_attribution(claim_text(claim), (view.tool_name for view in session.in_session)))
    if weight(core) < MIN_CONFIRM_WEIGHT:
        return None
    others = [view for view in session.in_session if view not in bound]
    return next((view for view in (*bound, *others) if view.input_core and core in view.input_core), None)


def confirm_by_code(
    normalized: Mapping[str, Any] | None,
    session: SessionIndex,
    *,
    failed_claims: Iterable[str] = (),
    knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS,
) -> CodeJudgement:
    """Label as direct_observation every claim that only restates a cited, successful invocation.

    A claim a fail-level Gatekeeper error targets, a capped claim (indirect, causal, knowledge-only critical), a
    question or a hedged text is never confirmed by code; it is left to the model (and to the caps).
    """
    failed = set(failed_claims)
    knowledge = tuple(knowledge_tools)
    ceilings = ceilings_of(normalized, knowledge)
    judgement = CodeJudgement()
    for index, claim in iter_claims(normalized):
        key = claim_key(claim, index)
        asked = asks_again(claim, session)
        if asked is not None:
            # Measured on the 0.5B default: "重试风暴 退避 429 限流" (lookup_knowledge's own query) labelled
            # direct_observation by the Verifier made a PASS. What a call was asked is no finding.
            judgement.confirmed[key] = ClaimCheck(claim_id=key, verification="unsupported", detail=(
                f"decided by code: the claim only restates what #{asked.id} {asked.tool_name} was asked"))
            continue
        views = [] if key in failed or key in ceilings else restated_by(claim, session, knowledge)
        if not views:
            judgement.remaining.append(key)
            continue
        ids = ", ".join(f"#{view.id} {view.tool_name}" for view in views)
        judgement.confirmed[key] = ClaimCheck(
            claim_id=key, verification="direct_observation", detail=CODE_DETAIL.format(ids=ids),
            evidence_refs=[EvidenceRef(tool_name=view.tool_name, source_invocation_ids=[view.id]) for view in views],
        )
    return judgement


def only_remaining(normalized: Mapping[str, Any] | None, remaining: Iterable[str]) -> dict[str, Any] | None:
    """The Executor output with only the claims the model still has to judge (what the Verifier model reads)."""
    if not isinstance(normalized, Mapping):
        return None
    keep = set(remaining)
    claims = [claim for index, claim in iter_claims(normalized) if claim_key(claim, index) in keep]
    return with_claims(normalized, claims)
