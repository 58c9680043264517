"""Code confirms quotes and caps what a model may call observed (docs/confirmation.md states the rules).

Pure code: no I/O, no DSPy. Used by the program's rounds and by evaluation alike (the ceilings a claim is capped to
are in :mod:`evigate.rules.verdict.ceilings`):

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
from typing import Any

from evigate.rules.contract import (
    binding_ids,
    claim_key,
    claim_text,
    claim_type,
    iter_bindings,
    iter_claims,
    with_claims,
)
from evigate.rules.gate.observed import KNOWLEDGE_TOOLS, is_knowledge_tool, restates_header
from evigate.rules.gate.session import InvocationView, SessionIndex
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.normalize import compact, fold, squash_whitespace, weight
from evigate.rules.text.phrases import HEDGE, is_question
from evigate.rules.thresholds import THRESHOLDS
from evigate.rules.verdict.ceilings import ceilings_of, cited_views, is_causal
from evigate.signatures import CRITICAL_CLAIM_TYPES, ClaimCheck, EvidenceRef

MIN_CONFIRM_WEIGHT = THRESHOLDS.confirmation.min_confirm_weight
"""A restated text lighter than this (2 per CJK character, 1 per other character) is too generic to confirm."""
CODE_DETAIL = "confirmed by code: the claim restates the cited output of {ids} verbatim"
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


@dataclass
class CodeJudgement:
    """What code decided before the Verifier model: confirmed claims, and the claims left to the model."""

    confirmed: dict[str, ClaimCheck] = field(default_factory=dict)
    remaining: list[str] = field(default_factory=list)

    @property
    def model_needed(self) -> bool:
        return bool(self.remaining)


def _occurs(core: str, views: Sequence[InvocationView]) -> bool:
    needle = compact(core)
    return bool(needle) and any(needle in part for view in views for part in view.returned_cores)


def restated_by(
    claim: Mapping[str, Any], session: SessionIndex, knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS
) -> list[InvocationView]:
    """The cited invocations whose returned text the claim only restates; [] when it says more than they show."""
    text = claim_text(claim)
    if not text.strip() or is_question(text) or HEDGE.search(fold(text)) or is_causal(claim):
        return []
    views = cited_views(session, claim)
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
        if not any(entity_occurs(entity, part) for view in views for part in view.returned):
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
    ceilings = ceilings_of(normalized, knowledge, session)
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
        if key not in failed and key in ceilings and ceilings[key].reason in ("window", "identifier"):
            # Only code reads the cited outputs: the matrix, which does not, takes code's label.
            judgement.confirmed[key] = ClaimCheck(claim_id=key, verification=ceilings[key].verification,
                                                  detail=f"decided by code: {ceilings[key].why}")
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
