"""add_anchor_observations: the returned lines that name what the user asked about, stated by code as observations.

A small Executor often quotes the wrong line, cites the wrong call or writes no usable claim at all, while the
evidence tools it called returned exactly the record the user asked about (measured on the 0.5B default: query_order
returned "order 123: status=FAILED error_code=ERR_TIMEOUT …", and the answer confirmed nothing). What a successful
evidence call returned is observed by definition; code need not take the Executor's word for it.

So code reads the question's anchors (its error codes, ids, trace ids, long numbers such as an order id, and
services, plus what the evidence named for a question that named no code: ``session_anchors``) and, for each
successful evidence invocation of this session, picks the returned line that names the most of them. At most
``MAX_ANCHOR_OBSERVATIONS`` such lines are added as claims "<tool> 返回：<line>" (a ``symptom``,
``support_level: direct``, one binding to that invocation), so every Gatekeeper rule and code confirmation judges them
like any claim. They are observations, never findings: they never lift the verdict (``decide_verdict``'s
``observations``), they never come from a knowledge document (a runbook line observes the runbook, not the
incident), and a line with causal, hedged or question wording, text addressed to a model, a tool's header line or
the call's own arguments is never used. Pure code (docs/confirmation.md §4d).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evigate.rules.contract import (
    CLAIMS,
    EXCERPT,
    INVOCATION_IDS,
    TOOL_NAME,
    binding_ids,
    claim_key,
    claim_text,
    excerpt_of,
    iter_bindings,
    iter_claims,
    observation_claim,
    tool_of,
    with_claims,
)
from evigate.rules.gate.session import InvocationView, SessionIndex
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.entity import Entity
from evigate.rules.text.instructions import tells_someone_to_act
from evigate.rules.text.normalize import compact, fold, weight
from evigate.rules.text.records import names_record, names_status
from evigate.rules.thresholds import THRESHOLDS
from evigate.rules.verdict.ceilings import ceilings_of
from evigate.rules.verdict.confirmation import (
    KNOWLEDGE_TOOLS,
    MIN_CONFIRM_WEIGHT,
    asks_again,
    is_knowledge_tool,
    restates_header,
)
from evigate.rules.verdict.junk_claims import (
    INSTRUCTION,
    ClaimRewrite,
    cut_line,
    junk_reason,
    never_observed,
    observation_text,
    usable_excerpt,
)
from evigate.rules.verdict.matrix import is_critical
from evigate.rules.verdict.premise import borrowed_reason, premise_reason

MAX_ANCHOR_OBSERVATIONS = THRESHOLDS.anchor_observations.max_observations
"""Lines code adds per round: enough to show the user's record and the line beside it, not a log dump."""
ANCHOR_PREFIX = "observed-"
ANCHOR_WHY = "added by code: {tool} returned a line naming {anchors} from the question, a direct observation"
STRONG_KINDS = frozenset({"error_code", "identifier", "address", "version"})
"""Entity kinds that single out a record; a service name alone names a whole stream of lines."""
MAX_RICHNESS = THRESHOLDS.anchor_observations.max_richness
"""Entities counted when two lines name the same anchors: past this many, a longer line says no more."""
MAX_TIES_COMPARED = 50
"""Lines naming the same anchors compared for what they say; past this many, the first is as good (cost bound)."""
MIN_ID_DIGITS = THRESHOLDS.anchor_observations.min_id_digits
"""A bare number in the question is an anchor from this many digits on (order 123, not "2 点多")."""


def question_anchors(query: str) -> list[Entity]:
    """The entities of ``query`` a returned line can be about: error codes, ids and services, not times or counts."""
    anchors: list[Entity] = []
    seen: set[str] = set()  # one set lookup per entity: linear in the entities of the question (issue 22 item 10)
    for entity in extract_entities(query or ""):
        if entity.kind == "number":
            if entity.has_unit or entity.digits < MIN_ID_DIGITS or entity.approximate:
                continue
        elif entity.kind not in STRONG_KINDS and entity.kind != "service":
            continue
        key = fold(entity.text)
        if key not in seen:
            seen.add(key)
            anchors.append(entity)
    return anchors


def session_anchors(query: str, evidence_named: Iterable[str] = ()) -> list[Entity]:
    """The question's anchors, then those of what the evidence named for it (``SessionIndex.evidence_named``: the
    census's error code when the question named none), each once. Asked by symptom, service and time, a question
    has no code of its own; the census found it in the records the question points at, so a line naming it is as
    much about the question as a line naming a code the user typed."""
    anchors = question_anchors(query)
    seen = {fold(anchor.text) for anchor in anchors}
    for name in evidence_named:
        for anchor in question_anchors(name):
            if fold(anchor.text) not in seen:
                seen.add(fold(anchor.text))
                anchors.append(anchor)
    return anchors


_DIGIT_RUN = re.compile(r"\d+")


def _present(anchors: Sequence[Entity], text: str) -> list[Entity]:
    """The anchors ``text`` names. A record number is first looked up among the text's digit runs (one pass over the
    text, one set lookup per anchor), so a question of n ids costs n lookups, not n scans of every output."""
    runs: set[str] | None = None
    present: list[Entity] = []
    for anchor in anchors:
        number = anchor.exact or anchor.text
        if anchor.kind == "number" and number.isdigit():
            if runs is None:
                runs = set(_DIGIT_RUN.findall(text))
            if number not in runs:
                continue
        if anchor_occurs(anchor, text):
            present.append(anchor)
    return present


def anchor_occurs(anchor: Entity, line: str) -> bool:
    """Whether ``line`` names the question's anchor: a number as a record's id or an HTTP status, not as a value
    equal to it ("order 123", "HTTP 429"; not "pool_pending=123")."""
    if anchor.kind == "number":
        number = anchor.exact or anchor.text
        return names_record(number, line) or names_status(number, line)
    return entity_occurs(anchor, line)


def _score(line: str, anchors: Sequence[Entity]) -> tuple[int, list[str]]:
    named = [anchor for anchor in anchors if anchor_occurs(anchor, line)]
    strong = sum(anchor.kind != "service" for anchor in named)
    # A record needs a strong anchor (an id, an error code): a service name alone is any line of that service.
    return (2 * strong + len(named) if strong else 0), [anchor.text for anchor in named]


def _best_line(view: InvocationView, anchors: Sequence[Entity]) -> tuple[tuple[int, int], str, list[str]] | None:
    """The usable returned line naming the most anchors; among equals the one saying most (a log record beats the
    "by error_code: X=31" tally above it)."""
    best: tuple[tuple[int, int], str, list[str]] | None = None
    ties = 0
    present = _present(anchors, view.raw_preview)
    if not any(anchor.kind != "service" for anchor in present):
        return None  # no strong anchor anywhere in this output: no line of it can name the record
    for raw in view.raw_preview.splitlines():
        line = cut_line(raw.strip())
        score, named = _score(line, present)
        if not score or (best is not None and score < best[0][0]):
            continue
        if best is not None and score == best[0][0]:
            ties += 1
            if ties > MAX_TIES_COMPARED:
                continue  # thousands of equal lines (a flood of one error): the first ones say as much
        else:
            ties = 0
        rank = (score, min(len(extract_entities(line)), MAX_RICHNESS))
        if best is not None and rank <= best[0]:
            continue
        if (not usable_excerpt(line) or restates_header(line, [view]) or tells_someone_to_act(line)
                or INSTRUCTION.search(fold(line))):
            continue
        best = (rank, line, named)
    return best


def _quoted_invocations(
    data: Mapping[str, Any], session: SessionIndex, query: str, knowledge: Sequence[str] = KNOWLEDGE_TOOLS
) -> set[int]:
    """The invocations a finding that may stand already quotes verbatim: their evidence is in the answer already,
    in the Executor's words. A misquote, a wrong citation, a junk text, a context claim or a claim that only restates
    what a call was asked (measured on the 0.5B default: the knowledge query, bound to query_order's line; a context
    claim "notification-service 短信服务商 熔断", bound to the log) leaves the call unquoted, so code may state it.
    So does a claim that can never be a direct observation itself (capped: indirect, causal, knowledge-only; or
    hedged). Measured on the 0.5B default: "索引列上使用函数导致索引失效", an inference quoting the part every SLOW_SQL
    line shares, was capped, and the answer confirmed nothing the logs showed."""
    quoted: set[int] = set()
    ceilings = ceilings_of(data, knowledge, session)
    for index, claim in iter_claims(data):
        text = claim_text(claim)
        if (not is_critical(claim) or never_observed(claim, claim_key(claim, index), ceilings)
                or junk_reason(text, query) is not None
                or premise_reason(claim, session, query) is not None or asks_again(claim, session) is not None
                or borrowed_reason(claim, session, knowledge) is not None):
            continue
        for _, binding in iter_bindings(claim):
            excerpt = compact(fold(excerpt_of(binding)))
            if weight(excerpt) < MIN_CONFIRM_WEIGHT:
                continue
            tool = tool_of(binding)
            for view in session.resolve(binding_ids(binding)):
                if view.tool_name == tool and any(excerpt in part for part in view.returned_cores):
                    quoted.add(view.id)
    return quoted


def add_anchor_observations(
    data: Mapping[str, Any] | None,
    session: SessionIndex,
    *,
    query: str = "",
    locale: str = "zh",
    knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS,
    limit: int = MAX_ANCHOR_OBSERVATIONS,
) -> tuple[dict[str, Any] | None, list[ClaimRewrite]]:
    """A copy of ``data`` with up to ``limit`` "<tool> 返回：<line>" claims for the returned lines naming the question's
    anchors (best first: more ids and codes named, then call order); the additions made. ``data`` is never modified.

    Only lines no claim already states, from successful evidence invocations of this session that are no knowledge
    documents and that no claim already quotes verbatim. An output without a claims list gets nothing (it is the
    schema rule's business).
    """
    if not isinstance(data, Mapping) or not isinstance(data.get(CLAIMS), list):
        return (dict(data) if isinstance(data, Mapping) else None), []
    anchors = session_anchors(query, session.evidence_named)
    if not anchors or limit <= 0:
        return copy.deepcopy(dict(data)), []
    knowledge = tuple(knowledge_tools)
    result = copy.deepcopy(dict(data))
    said = [compact(fold(claim_text(claim))) for _, claim in iter_claims(result)]
    taken = {claim_key(claim, index) for index, claim in iter_claims(result)}
    quoted = _quoted_invocations(result, session, query, knowledge)
    found: list[tuple[int, int, InvocationView, str, list[str]]] = []
    for order, view in enumerate(session.in_session):
        if (not view.success or not view.invocation.is_evidence or is_knowledge_tool(view.tool_name, knowledge)
                or view.id in quoted):
            continue
        best = _best_line(view, anchors)
        if best is not None:
            found.append((-best[0][0], order, view, best[1], best[2]))
    added: list[dict[str, Any]] = []
    rewrites: list[ClaimRewrite] = []
    for _, _, view, line, named in sorted(found, key=lambda item: (item[0], item[1])):
        core = compact(fold(line))
        if any(core in other for other in said):
            continue
        said.append(core)
        number = 1 + len(added)
        while f"{ANCHOR_PREFIX}{number}" in taken:
            number += 1
        claim_id = f"{ANCHOR_PREFIX}{number}"
        taken.add(claim_id)
        text = observation_text(view.tool_name, line, [view], locale, knowledge)
        added.append(observation_claim(claim_id, "symptom", text,
                                       {INVOCATION_IDS: [view.id], TOOL_NAME: view.tool_name, EXCERPT: line}))
        rewrites.append(ClaimRewrite(claim_id, "", text, ANCHOR_WHY.format(tool=view.tool_name,
                                                                          anchors=", ".join(named))))
        if len(added) >= limit:
            break
    if added:
        result[CLAIMS] = [*result[CLAIMS], *added]
    return result, rewrites


def without_claims(data: Mapping[str, Any] | None, claim_ids: Iterable[str]) -> dict[str, Any] | None:
    """A copy of ``data`` without the claims whose keys are ``claim_ids`` (an observation a rule failed)."""
    if not isinstance(data, Mapping):
        return None
    drop = set(claim_ids)
    claims = data.get(CLAIMS)
    if not isinstance(claims, list):
        return dict(data)
    kept = [claim for index, claim in enumerate(claims)
            if not (isinstance(claim, Mapping) and claim_key(claim, index) in drop)]
    return with_claims(data, kept)
