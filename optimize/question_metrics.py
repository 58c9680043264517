"""Per-answer metrics of the question bank (issue 18), computed by code from the demo world's ground truth.

An answer is scored from what the benchmark recorded of its session (an :class:`AnsweredQuestion`), so a JSONL of
answers can be scored again without re-running anything:

- **confirmed**: the directly observed allowed claims the answer states (as in :mod:`evigate.optimize.world_facts`);
- **useful**: a key fact of the right incident among them (``world_facts.judge_facts``: a finding naming the
  incident's error code, service, anchor order or trace, with every entity in the session's tool outputs);
- **wrong**: a key fact of another incident anywhere in the answer (its error code, anchor order, trace id, or its
  service where the right incident does not involve it) that the question did not name itself; a confirmed
  statement about nothing the question or its incident names (irrelevant); a confirmed fact naming an entity no
  tool returned, or a root cause naming a service or code the incident does not involve (``judge_facts``);
- **echoed**: a confirmed statement made of the question's own words (``junk.echoes_question``). The claim rules let
  one stand where its evidence shows the record it names ("订单 456 付款失败" beside the order's row), so it is not
  junk by definition; it is counted apart because it tells the user what they said, and a NORMAL answer whose
  only key fact is one of these confirms the question, not a finding;
- **junk**: a line shown outside the confirmed facts (hypotheses, gaps, actions, the Composer's prose) that repeats
  itself, restates the question, names nothing of the session, or — for a hypothesis — has no basis in evidence.
  The checks are the guard's own (``evigate.rules.text.junk``): the metric and the product define junk once.

Pure functions: no model, no store. Rates and intervals are in :mod:`evigate.optimize.stats`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from evigate.optimize.world_facts import judge_facts, key_entities
from evigate.rules.answer.catalogue import line_body
from evigate.rules.answer.render import TEMPLATES
from evigate.rules.answer.stated import states_claim
from evigate.rules.text.entities import extract_entities
from evigate.rules.text.junk import echoes_question, junk_reason, names_evidence
from evigate.rules.text.normalize import fold
from evigate.rules.text.records import names_record
from evigate.signatures import ComposerInput


class AnsweredQuestion(BaseModel):
    """What the benchmark keeps of one asked question: enough to score it again without the store."""

    id: str
    text: str
    locale: str
    incident: str | None
    family: str = ""
    split: str = ""
    model: str = ""
    session_id: str | None = None
    output_type: str | None = None
    verdict: str | None = None
    answer: str = ""
    seconds: float | None = None
    round_seconds: list[float] = Field(default_factory=list)
    composer_input: dict[str, Any] | None = None
    outputs: list[str] = Field(default_factory=list, description="previews of the session's successful tool outputs")
    plan: list[dict[str, Any]] = Field(default_factory=list, description="skill and steps of each round")
    contributions: dict[str, Any] | None = None
    error: str | None = None


@dataclass
class AnswerScore:
    """The metrics of one answer (see the module docstring)."""

    answerable: bool
    confirmed: list[str] = field(default_factory=list)
    useful: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    junk: list[str] = field(default_factory=list)
    echoed: list[str] = field(default_factory=list)
    normal: bool = False
    failed: bool = False

    @property
    def normal_without_key_fact(self) -> bool:
        return self.normal and not self.useful


_SECTION_TITLES = {
    key: {TEMPLATES[locale][key] for locale in TEMPLATES}
    for key in ("confirmed", "based_on", "possible", "inferred", "gaps", "current_gaps", "next_steps")
}
def _fixed_lines() -> set[str]:
    """The product's own fixed texts (the catalogue's headings, gaps and actions): never junk of a model."""
    from evigate.rules.answer.catalogue import CATALOGUE

    texts = [text for words in CATALOGUE.values() for key, text in words.items() if key != "unconfirmed_prefix"]
    # A fixed action is shown with its fixed reason in the template's brackets ("…重新诊断（现有证据不足以确认结论）").
    for locale, words in CATALOGUE.items():
        for key, reason in words.items():
            action = words.get(key.removesuffix("_reason")) if key.endswith("_reason") else None
            if action:
                texts.append(TEMPLATES[locale]["action_reason"].format(action=action, reason=reason))
    return {fold(text.strip()) for text in texts if "{" not in text}


_FIXED_LINES = _fixed_lines()
_QUESTION_LINE = re.compile(r"^(?:您的问题：|Your question: )")


def shown_lines(answer: str) -> list[tuple[str, str]]:
    """(section, text) of every line the answer shows, template titles and fixed texts left out.

    The section is the key of the last title seen (``prose`` before any title): ``possible`` lines are
    hypotheses, ``gaps`` / ``current_gaps`` gaps, ``next_steps`` actions, ``confirmed`` / ``based_on`` facts.
    """
    section = "prose"
    lines: list[tuple[str, str]] = []
    for raw in answer.splitlines():
        line = raw.strip()
        if not line:
            continue
        title = next((key for key, titles in _SECTION_TITLES.items() if line in titles), None)
        if title:
            section = title
            continue
        body = line_body(line)
        if not body or fold(body) in _FIXED_LINES or _QUESTION_LINE.match(body):
            continue
        lines.append((section, body))
    return lines


def confirmed_claims(record: AnsweredQuestion) -> list[Any]:
    """The directly observed allowed claims the answer states."""
    if not record.composer_input:
        return []
    allowed = ComposerInput.model_validate(record.composer_input).allowed_claims
    tools = {str(call.get("tool", "")) for call in record.plan}
    return [claim for claim in allowed
            if claim.support_level == "direct" and states_claim(claim.claim_text, record.answer, tools)]


def _names(text: str, key: str, order: str) -> bool:
    if key == order:
        return names_record(order, text)
    return key.casefold() in text.casefold()


def foreign_facts(answer: str, question: str, incident: Any | None, incidents: Sequence[Any]) -> list[str]:
    """Key facts of other incidents the answer names and the question did not."""
    involved = {incident.service, *incident.related_services} if incident is not None else set()
    found: list[str] = []
    for other in incidents:
        if incident is not None and other.incident_id == incident.incident_id:
            continue
        order = str(other.anchor_order_id) if other.anchor_order_id else ""
        for key in key_entities(other):
            if key == other.service and key in involved:
                continue  # a service both incidents involve names neither
            if incident is not None and key == incident.error_code:
                continue
            if _names(answer, key, order) and not _names(question, key, order):
                found.append(f"{other.incident_id}: {key}")
    return found


def _relevant(text: str, question: str, incident: Any | None) -> bool:
    """Whether a confirmed statement is about the question: an entity the question names, or one of its incident."""
    asked = [e.text for e in extract_entities(question) if e.is_key_value]
    keys = list(asked)
    if incident is not None:
        keys += [*key_entities(incident), *incident.related_services]
    order = str(incident.anchor_order_id) if incident is not None and incident.anchor_order_id else ""
    return any(_names(text, key, order) for key in keys if key)


def judge_junk(record: AnsweredQuestion) -> list[str]:
    """Lines shown outside the confirmed facts that are junk, each with its reason."""
    returned = "\n".join(record.outputs)
    session_text = "\n".join([returned, record.text])
    junk: list[str] = []
    confirmed = {fold(claim.claim_text) for claim in confirmed_claims(record)}
    for section, line in shown_lines(record.answer):
        if section in ("confirmed", "based_on") and fold(line) in confirmed:
            continue  # a confirmed fact is judged by the claim rules and by useful/wrong
        reason = junk_reason(line, record.text, session_text)
        if reason is None and section == "possible" and not names_evidence(line, returned, record.text):
            reason = "a hypothesis that names no evidence of this session"
        if reason is not None:
            junk.append(f"[{section}] {line[:120]} ({reason})")
    return junk


def score_answer(record: AnsweredQuestion, incidents: Sequence[Any]) -> AnswerScore:
    """The metrics of one recorded answer against the world's incidents (``world_incidents``)."""
    by_id = {incident.incident_id: incident for incident in incidents}
    incident = by_id.get(record.incident) if record.incident else None
    score = AnswerScore(answerable=incident is not None, failed=record.error is not None,
                        normal=record.output_type == "NORMAL")
    if record.error is not None:
        return score
    claims = confirmed_claims(record)
    score.confirmed = [claim.claim_text for claim in claims]
    if incident is not None:
        tools = {str(call.get("tool", "")) for call in record.plan}
        score.useful, invented = judge_facts(incident, claims, record.answer, record.outputs, tools)
        score.wrong += invented
    score.wrong += [f"names another incident's key fact {fact}"
                    for fact in foreign_facts(record.answer, record.text, incident, incidents)]
    score.wrong += [f"irrelevant to the question: {text[:120]}" for text in score.confirmed
                    if not _relevant(text, record.text, incident)]
    score.junk = judge_junk(record)
    score.echoed = [text for text in score.confirmed if echoes_question(text, record.text)]
    return score


def contribution_sums(records: Iterable[AnsweredQuestion]) -> dict[str, int]:
    """Sums of the audit's ``contributions`` records (optional: sessions without one add nothing)."""
    sums: dict[str, int] = {}

    def add(key: str, value: Any) -> None:
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, int):
            sums[key] = sums.get(key, 0) + value

    for record in records:
        contributions = record.contributions or {}
        for round_record in contributions.get("rounds") or []:
            for agent in ("executor", "verifier"):
                part = round_record.get(agent) or {}
                for key, value in part.items():
                    add(f"{agent}.{key}", value)
        composer = contributions.get("composer") or {}
        if isinstance(composer, Mapping) and composer.get("status"):
            add(f"composer.{composer['status']}", 1)
        if contributions:
            add("sessions_with_contributions", 1)
    return dict(sorted(sums.items()))


def executor_own_claims(records: Iterable[AnsweredQuestion]) -> tuple[int, int]:
    """(allowed claims the Executor wrote that were kept as written, all allowed claims) over ``records``: how much of
    what users are told is the Executor's own (issue 19). A claim counts as the Executor's only when the last round's
    contributions record it ``kept``; code's observations and rewrites, and sessions without a record, count as not."""
    own = total = 0
    for record in records:
        rounds = (record.contributions or {}).get("rounds") or []
        last = (rounds[-1].get("executor") or {}) if rounds and isinstance(rounds[-1], Mapping) else {}
        kept = {item.get("claim_id") for item in last.get("claims") or []
                if isinstance(item, Mapping) and item.get("status") == "kept"}
        for claim in (record.composer_input or {}).get("allowed_claims") or []:
            total += 1
            own += isinstance(claim, Mapping) and claim.get("claim_id") in kept
    return own, total
