"""Checking the confirmed facts of a demo answer against the demo world's ground truth (``world_incidents``).

A confirmed fact is a directly observed allowed claim (``support_level: direct``, which code sets from the decided
label) of the session's Composer input that the final answer states (its text, or every entity in it, appears in
the answer). It is *correct* when it is a finding about the incident (a critical claim type: a definition quoted
from a runbook is not) that names a key entity of the incident (error code, service, anchor order, anchor trace;
the order only where the text names that order, not where a value equals it) and every entity in it occurs in the
session's successful tool outputs; it is *wrong* when it names an entity no output of the session shows, or is a
root cause naming a service or error code the incident's ground truth does not involve. Used by
bench/grounding_demo.py and the slow demo-question test.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evigate.demo.catalog import key_entities
from evigate.rules.answer.stated import ATTRIBUTED_TO, states_claim
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.records import names_record
from evigate.signatures import CRITICAL_CLAIM_TYPES, ComposerInput


def judge_facts(incident: Any, allowed: Sequence[Any], answer: str, outputs: Sequence[str],
                tools: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(correct, wrong) confirmed facts the answer states, checked against the incident and the session's outputs."""
    from evigate.demo.catalog import ERROR_CODES, SERVICES

    tools = tuple(tools)
    involved = {incident.service, *incident.related_services, incident.error_code}
    # The anchor order counts where a line names that order ("order 123"), not where a value equals it.
    order = str(incident.anchor_order_id) if incident.anchor_order_id else ""
    keys = [key.casefold() for key in key_entities(incident) if key != order]
    correct: list[str] = []
    wrong: list[str] = []
    for claim in allowed:
        if claim.support_level != "direct":
            continue  # a reasonable inference is shown apart from the confirmed facts, and is not one
        text = claim.claim_text
        if not states_claim(text, answer, tools):
            continue
        entities = extract_entities(text)
        said_by = ATTRIBUTED_TO.match(text)  # "query_order 返回：…": the tool's name attributes, it is no value
        unknown = [e.text for e in entities if not (said_by and e.text == said_by.group(1))
                   and not any(entity_occurs(e, output) for output in outputs)]
        foreign = [name for name in (*ERROR_CODES, *SERVICES) if name in text and name not in involved]
        if unknown or (claim.claim_type == "root_cause" and foreign):
            wrong.append(f"{text} (not in the evidence: {unknown or foreign})")
        elif claim.claim_type in CRITICAL_CLAIM_TYPES and (any(key in text.casefold() for key in keys)
                                                          or (order and names_record(order, text))):
            correct.append(text)
    return correct, wrong


def confirmed_facts(store: Any, session_id: str, answer: str, incident: Any) -> tuple[list[str], list[str]]:
    """(correct, wrong) confirmed facts of one finished session, from its audit trail."""
    record = store.session(session_id)
    evaluation = (record.get("self_evaluation") or {}).get("verifier_evaluation") or {}
    composer_input = evaluation.get("composer_input")
    allowed = ComposerInput.model_validate(composer_input).allowed_claims if composer_input else []
    invocations = [inv for inv in store.invocations(session_id) if inv.success]
    outputs = [inv.output or inv.output_preview for inv in invocations]
    return judge_facts(incident, allowed, answer, outputs, {inv.tool_name for inv in invocations})
