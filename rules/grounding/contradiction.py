"""Does a claim contradict the span it is bound to? Code sees two kinds: a changed value and a flipped negation.

A changed value: the claim names a number, time or name that the passage lacks, while the aligned span holds a
different entity of the same kind (and, for numbers, the same dimension) — "timed out after 5 s" against "timed out
after 3 s". A flipped negation: a clause of the claim and the span clause that restates most of it disagree on
"not / never / failed to / 没有 / 未". Anything subtler is left to the Verifier model.
"""

from __future__ import annotations

import re

from evigate.rules.grounding.binding import content_tokens
from evigate.rules.grounding.sentences import split_sentences
from evigate.rules.text.entities import Entity, entity_occurs, extract_entities
from evigate.rules.text.normalize import fold
from evigate.rules.thresholds import THRESHOLDS

NEGATION = re.compile(
    r"(?<![a-z])(?:not|no|never|none|neither|nor|cannot|without)(?![a-z])|n't|(?<![a-z])(?:fail(?:s|ed)?|unable)\s+to"
    r"(?![a-z])|没有|并未|未能|未曾|并非|不是|不会|从未|无法"
)
"""A clause states the opposite of its positive form. "failed to start" is as negative as "did not start"."""
NOT_A_NEGATION = re.compile(
    r"(?<![a-z])not\s+(?:only|just|merely)(?![a-z])|(?<![a-z])(?:not|n't)\b[^,;]*?\buntil(?![a-z])"
)
"""Negation words that negate nothing: "not only", and "not … until" ("not finalised until Friday" = on Friday)."""
CLAUSE_BREAK = re.compile(
    r"[,;:]\s|[;；，：]|\s(?:though|although|while|whereas|but)\s|(?:^|\s)(?:though|although|while|whereas)\s",
    re.IGNORECASE,
)
MIN_CLAUSE_TOKENS = THRESHOLDS.grounding.min_contradiction_clause_tokens
"""A clause with fewer content words than this cannot be matched to a span clause with any confidence."""
MIN_NEGATION_SPAN_COVERAGE = THRESHOLDS.grounding.min_negation_span_coverage


def _same_kind(left: Entity, right: Entity) -> bool:
    if left.kind != right.kind:
        return False
    return left.kind != "number" or left.dimension == right.dimension


def changed_values(claim: str, span: str, passage: str) -> list[tuple[Entity, Entity]]:
    """(claim entity, span entity) pairs where the claim's value is absent from the passage and the span has
    another value of the same kind that the claim does not mention."""
    claim_entities = [entity for entity in extract_entities(claim) if entity.is_key_value]
    if not claim_entities:
        return []
    span_entities = [entity for entity in extract_entities(span) if entity.is_key_value]
    pairs: list[tuple[Entity, Entity]] = []
    for entity in claim_entities:
        if entity_occurs(entity, passage):
            continue
        rivals = [other for other in span_entities if _same_kind(entity, other) and not entity_occurs(other, claim)]
        if rivals:
            pairs.append((entity, rivals[0]))
    return pairs


def clauses(text: str) -> list[str]:
    """The clauses of a text: its sentences cut at commas, semicolons and contrasting conjunctions."""
    return [part for sentence in split_sentences(text) for part in CLAUSE_BREAK.split(sentence.text) if part.strip()]


def negated(clause: str) -> bool:
    """Whether a clause is negated (a "not only" or a "not … until" negates nothing)."""
    return bool(NEGATION.search(NOT_A_NEGATION.sub(" ", fold(clause))))


def negation_flipped(claim: str, span: str) -> bool:
    """A clause of the claim and the span clause that restates most of it disagree in polarity (one is negated).

    Clause by clause: a "no" in another clause of the span ("…, though media has not reported a spill") or of the
    claim ("While there were no reports, power was cut") says nothing about the clause it sits beside.
    """
    span_clauses = [(set(content_tokens(text)), negated(text)) for text in clauses(span)]
    for text in clauses(claim):
        tokens = set(content_tokens(text))
        if len(tokens) < MIN_CLAUSE_TOKENS:
            continue
        best, polarity = 0.0, False
        for held, negative in span_clauses:
            share = len(tokens & held) / len(tokens)
            if share > best:
                best, polarity = share, negative
        if best >= MIN_NEGATION_SPAN_COVERAGE and negated(text) != polarity:
            return True
    return False
