"""off_topic_claims: a confirmed claim must be about the question (issue 18, docs/confirmation.md §4e).

A true line of another incident is still true: quoted verbatim, code confirms it and a Verifier calls it observed.
Measured on the 0.5B default: "query_logs（notification-service）返回：by error_code: ERR_SMS_PROVIDER=67" was 已确认
in two answers to payment questions, and the answers were NORMAL. So code asks a second question of every claim:
is it about what the user asked?

A claim is about the question when the claim, its cited excerpts or the call it quotes name

1. one of the question's anchors (its services, error codes, ids, order numbers; ``question_anchors``), or what the
   evidence named for it (the census's error code, ``session_anchors``);
2. one of the question's content terms (CJK bigrams, ASCII words; generic advice and time words excepted,
   ``rules/text/junk.yaml``), so a question by symptom ("收不到短信", "rate limited") can be answered; or
3. an entity that this session's evidence **links** to the question: an id, code or service of the claim that one
   returned line names together with an anchor or a content term of the question (the same trace id on a line
   naming the question's service; an error code a runbook line explains in the question's words). A knowledge
   document's line describes the system, not this incident, so it links only with an anchor or
   ``minRunbookLinkTerms`` of the question's terms: measured on train, "支付成功后 notification-service 发送 ORDER_PAID
   短信" tied a notification-service tally to "刚发完版支付就挂了一片" through the one word "支付", and the answer
   was NORMAL on another incident's fact.

A claim that cites only knowledge documents and names nothing the session's evidence tools observed (measured on
dev: "pay-gateway 调用上游支付通道超时", from the ERR_TIMEOUT runbook, offered as a direction for a day with no
records at all) is the runbook's, not this incident's: not even a direction.

A symptom, cause, impact or risk that cites only readings of series their tools found within the alert threshold
(``ToolInvocation.within_threshold``) states what those readings show did not happen: context at most.

A claim whose text is no finding at all (the question restated, a question, an instruction: ``junk_reason``) is
not about anything, however many of the question's keys it names.

Any other claim is context at most: never shown as confirmed, and a NORMAL answer needs a directly observed critical
claim that is about the question (``decide_verdict(off_topic=)``). With no question, nothing is judged.

A hypothesis or gap that is a runbook's direction for an error this session never observed, naming nothing it did
observe, is not shown (``rules/verdict/runbook_directions.py``).

A hypothesis, gap or action the user reads is held to the same test through what it names (``off_topic_items``): each
service and error code in it is the question's, or one this session's returned lines link to the question. Measured
on train, for questions no incident answers: "ERR_SMS_PROVIDER 短信服务商 熔断" (the planner's runbook query) offered
as a direction for an ERR_KAFKA_LAG question, "pay-gateway 调用上游支付通道超时" for a trace the evidence never named.
Pure code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from evigate.rules.contract import (
    ACTIONS,
    BASIS,
    HYPOTHESES,
    MISSING_INFO,
    NEEDED_EVIDENCE,
    binding_ids,
    claim_key,
    claim_text,
    claim_type,
    excerpt_of,
    iter_bindings,
    iter_claims,
)
from evigate.rules.gate.actions import iter_user_texts
from evigate.rules.gate.session import SessionIndex
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.entity import Entity
from evigate.rules.text.junk import content_terms, junk_settings, names_evidence, terms_found
from evigate.rules.text.records import RECORD_WORDS
from evigate.rules.verdict.anchor_observations import anchor_occurs, session_anchors
from evigate.rules.verdict.confirmation import is_knowledge_tool
from evigate.rules.verdict.junk_claims import junk_reason
from evigate.rules.verdict.premise import borrowed_reason, observed_text, premise_reason, unobserved_reason
from evigate.rules.verdict.runbook_directions import RUNBOOK_DIRECTION_WHY, RunbookDirections
from evigate.signatures import CRITICAL_CLAIM_TYPES

ITEM_FIELDS = (HYPOTHESES, ACTIONS, MISSING_INFO)
"""The items of an output a user reads besides claims."""
ITEM_KINDS = frozenset({"error_code", "service"})
"""What an item names that ties it to one incident: a service or an error code."""
RECORD_KINDS = frozenset({"number", "identifier"})
"""Anchors that single out one record (an order number, a trace id): with one, the question is about that record."""
LINK_KINDS = frozenset({"identifier", "error_code", "service", "address"})
"""Entities of a claim through which a returned line can tie it to the question (not times or counts)."""
OFF_TOPIC_WHY = "not about the question: it names none of its services, ids, codes or terms, nor anything the " \
                "evidence links to them"
ITEM_OFF_TOPIC_WHY = "not about the question: it names {names}, which neither the question nor anything the evidence " \
                     "links to it names"
NO_KEYS_WHY = "the question names nothing a claim could be about (no service, id, code or content term)"
NOT_A_FINDING_WHY = "not a finding: {why}"
RUNBOOK_ONLY_WHY = "a knowledge document's text: nothing this session's evidence tools observed names it"
HEALTHY_WHY = "a reading of a series its tool found within its alert threshold: no symptom, cause or impact"


Line = tuple[str, bool]
"""A returned line, and whether a knowledge document returned it (it describes; it did not observe)."""


class QuestionKeys:
    """The question's anchors and content terms, and what a text must name to be about it."""

    def __init__(self, query: str, evidence_named: Iterable[str] = ()) -> None:
        self.anchors = session_anchors(query, evidence_named)
        self.terms = content_terms(query, junk_settings())
        if any(anchor.kind in RECORD_KINDS for anchor in self.anchors):
            # "Order 88888888 failed to pay" is about that order, not about orders: its label word would tie the
            # question to every other order's line (measured on train: "order=55539 ERR_SMS_PROVIDER" linked a
            # notification-service count to a payment question about an order no record names).
            self.terms -= set(RECORD_WORDS)

    def __bool__(self) -> bool:
        return bool(self.anchors or self.terms)

    @property
    def names_a_service(self) -> bool:
        """Whether the question names a service: then it is about that service, and another service is about it only
        where a returned line names the two together (or the other with the question's id or code). A shared word is
        no tie between two services: measured on train (none-near-en-06, 0.5B default), "Was api-gateway rate limiting
        requests at 8 am?" confirmed a pay-gateway ERR_SIGN_INVALID line, tied through "rate" in the header of
        pay-gateway's error_rate series, and the answer was NORMAL."""
        return any(anchor.kind == "service" for anchor in self.anchors)

    def named_in(self, text: str) -> bool:
        return any(anchor_occurs(anchor, text) for anchor in self.anchors) or bool(terms_found(self.terms, prose(text)))

    def linked_by(self, line: Line, entity: Entity | None = None) -> bool:
        """Whether a returned line ties what it names (``entity``) to the question: an evidence line through an anchor
        or one content term, a knowledge document's line through an anchor or ``minRunbookLinkTerms`` terms (see
        above). Another service than the one the question names is tied to it through an anchor only (see
        ``names_a_service``)."""
        text, described = line
        if entity is not None and entity.kind == "service" and self.names_a_service:
            return any(anchor_occurs(anchor, text) for anchor in self.anchors)
        if not described:
            return self.named_in(text)
        return (any(anchor_occurs(anchor, text) for anchor in self.anchors)
                or len(terms_found(self.terms, prose(text))) >= junk_settings().min_runbook_link_terms)


_FIELD = re.compile(r"(?<![\w.\-/])[^\W\d_]+=\S*")
"""A structured field of a record under a plain word, its name and its value ("order=55539", "template=ORDER_PAID").
A compound name ("deadlock_count=7") is the name of what was measured, and stays: a question may ask about it."""


def prose(text: str) -> str:
    """``text`` without its structured fields: what a content term of the question may be found in.

    A field's name labels a value, and its value is an id or a constant; neither says what happened. Measured on
    train (complaint-en-04, 0.5B default): for "Shoppers say they won the flash sale but the order failed", the
    notification-service tally of ERR_SMS_PROVIDER was confirmed and the answer NORMAL, linked through "order" in
    "order=55539 … template=ORDER_PAID" on an SMS line. Ids and codes in fields still tie a line to the question's
    anchors (``anchor_occurs`` reads the whole line)."""
    return _FIELD.sub(" ", text)


def _claim_side(claim: Mapping[str, Any], session: SessionIndex) -> tuple[str, list[str]]:
    """The claim's text with its cited excerpts, and the arguments of every evidence call it cites (what the call
    was about: query_logs for payment-service returns payment-service's lines, whether or not a line says so)."""
    parts = [claim_text(claim)]
    inputs: list[str] = []
    for _, binding in iter_bindings(claim):
        parts.append(excerpt_of(binding))
        for view in session.resolve(binding_ids(binding)):
            if view.success and view.invocation.input and not is_knowledge_tool(view.tool_name):
                inputs.append(" ".join(f"{key}={value}" for key, value in view.invocation.input.items()))
    return "\n".join(part for part in parts if part), inputs


def _returned_lines(session: SessionIndex) -> list[Line]:
    """The lines this session's successful calls returned, as their previews show them, each with whether a
    knowledge document returned it. Not their retrieval details: those are one JSON line holding the call's own
    filters beside everything it found, so any two names in it would count as linked (measured on train: a knowledge
    call's echoed query "ERR_TIMEOUT 支付网关超时" linked pay-gateway to a question about a trace no record names)."""
    return [(line, is_knowledge_tool(view.tool_name)) for view in session.in_session
            if view.success and view.raw_preview for line in view.raw_preview.splitlines() if line.strip()]


def _linked(side: str, keys: QuestionKeys, lines: list[Line]) -> bool:
    return any(_entity_linked(entity, keys, lines) for entity in extract_entities(side) if entity.kind in LINK_KINDS)


def _entity_linked(entity: Entity, keys: QuestionKeys, lines: list[Line]) -> bool:
    """Whether one returned line names ``entity`` and ties it to the question (``QuestionKeys.linked_by``)."""
    return any(entity_occurs(entity, line[0]) and keys.linked_by(line, entity) for line in lines)


def _healthy_only(claim: Mapping[str, Any], session: SessionIndex) -> bool:
    """Whether every successful call the claim cites is a series its tool found within its alert threshold
    (``ToolInvocation.within_threshold``).

    Measured on train (none-healthy-en-03, 0.5B default): for "Did order-service have trouble at 7 pm?", one minute of
    order-service's pool_active (avg 7.5 of a threshold of 36, "no breach in window") was rewritten by code into a
    symptom, and the answer was NORMAL. A healthy reading is context ("the pool was fine", a wrong guess refuted); as
    a symptom, a root cause or an impact it states what it shows did not happen."""
    cited = [view for _, binding in iter_bindings(claim) for view in session.resolve(binding_ids(binding))
             if view.success]
    return bool(cited) and all(view.invocation.within_threshold for view in cited)


def _runbook_only(claim: Mapping[str, Any], session: SessionIndex) -> bool:
    """Whether every call the claim cites is a knowledge document (a runbook describes, it does not observe)."""
    cited = [view for _, binding in iter_bindings(claim) for view in session.resolve(binding_ids(binding))]
    return bool(cited) and all(is_knowledge_tool(view.tool_name) for view in cited)


def off_topic_claims(normalized: Mapping[str, Any] | None, session: SessionIndex, query: str | None = None
                     ) -> dict[str, str]:
    """Claim id → why it is not about the question, for every claim that is not (see the module docstring).

    ``query`` defaults to the session's. Empty when there is no question; every claim when the question names
    nothing at all."""
    query = session.query if query is None else query
    if not query or not query.strip():
        return {}
    keys = QuestionKeys(query, session.evidence_named)
    lines: list[Line] | None = None
    observed: str | None = None
    off: dict[str, str] = {}
    for index, claim in iter_claims(normalized):
        key = claim_key(claim, index)
        why = (junk_reason(claim_text(claim), query) or premise_reason(claim, session, query)
               or unobserved_reason(claim, session) or borrowed_reason(claim, session))
        if why is not None:
            # The question restated names all its keys, yet is no finding about them (issue 18: "a restated question
            # is never a claim, in any language"); code rewrote it where it cited a usable excerpt.
            off[key] = NOT_A_FINDING_WHY.format(why=why)
            continue
        if observed is None:
            observed = observed_text(view for view in session.in_session if view.invocation.is_evidence
                                     and not is_knowledge_tool(view.tool_name))
        if _runbook_only(claim, session) and not names_evidence(claim_text(claim), observed, query):
            off[key] = RUNBOOK_ONLY_WHY
            continue
        if claim_type(claim) in CRITICAL_CLAIM_TYPES and _healthy_only(claim, session):
            off[key] = HEALTHY_WHY
            continue
        if not keys:
            off[key] = NO_KEYS_WHY
            continue
        side, inputs = _claim_side(claim, session)
        # Only the anchors (a service, an id, a code) of a call's arguments count: a free-text query argument may
        # hold the question's own words, which says nothing about what the call returned.
        if keys.named_in(side) or any(anchor_occurs(anchor, text) for anchor in keys.anchors for text in inputs):
            continue
        if lines is None:
            lines = _returned_lines(session)
        if not _linked(side, keys, lines):
            off[key] = OFF_TOPIC_WHY
    return off



def off_topic_items(normalized: Mapping[str, Any] | None, session: SessionIndex, query: str | None = None
                    ) -> dict[str, str]:
    """Item path ("hypotheses[0]", "missing_info[1]") → why it is not about the question, for every hypothesis, gap
    and action whose shown text names a service or an error code that is neither the question's nor linked to it by
    a returned line of this session (see the module docstring). A basis and the evidence a hypothesis still needs are
    not shown, and may name what was not looked at yet. Empty when there is no question."""
    query = session.query if query is None else query
    if not query or not query.strip():
        return {}
    keys = QuestionKeys(query, session.evidence_named)
    lines: list[Line] | None = None
    directions: RunbookDirections | None = None
    off: dict[str, str] = {}
    for target, text, _ in iter_user_texts(normalized, ITEM_FIELDS):
        item = target.split(".", 1)[0]
        if item in off or target.endswith(f".{BASIS}") or f".{NEEDED_EVIDENCE}[" in target:
            continue
        if item.startswith((HYPOTHESES, MISSING_INFO)) and not any(
                anchor_occurs(anchor, text) for anchor in keys.anchors):
            directions = directions or RunbookDirections(session)
            if directions.without_footing(text):
                off[item] = RUNBOOK_DIRECTION_WHY
                continue
        named = [entity for entity in extract_entities(text) if entity.kind in ITEM_KINDS
                 and not any(anchor_occurs(anchor, entity.text) for anchor in keys.anchors)
                 and not entity_occurs(entity, query)]
        if not named:
            continue
        if lines is None:
            lines = _returned_lines(session)
        unlinked = [entity.text for entity in named if not _entity_linked(entity, keys, lines)]
        if unlinked:
            off[item] = ITEM_OFF_TOPIC_WHY.format(names=", ".join(f"'{name}'" for name in unlinked[:4]))
    return off
