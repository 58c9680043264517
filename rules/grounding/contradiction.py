"""Does a claim contradict the span it is bound to? Code sees two kinds: a changed value and a flipped negation.

A changed value: the claim names a number, time or name that the passage lacks, while the aligned span holds a
different entity of the same kind (and, for numbers, the same dimension) — "timed out after 5 s" against "timed out
after 3 s". A flipped negation: the claim and a span that restates most of it disagree on "not / never / 没有 / 未".
Anything subtler is left to the Verifier model.
"""

from __future__ import annotations

import re

from evigate.rules.grounding.binding import content_tokens
from evigate.rules.grounding.sentences import split_sentences
from evigate.rules.text.entities import Entity, entity_occurs, extract_entities
from evigate.rules.text.normalize import fold

NEGATION = re.compile(
    r"(?<![a-z])(?:not|no|never|none|neither|nor|cannot|without)(?![a-z])|n't|没有|并未|未能|未曾|并非|不是|不会|从未|无法"
)
MIN_NEGATION_SPAN_COVERAGE = 0.7


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


def negation_flipped(claim: str, span: str) -> bool:
    """The span sentence that restates most of the claim does so with the opposite polarity (one is negated).

    Only the single closest sentence is compared: a "no" anywhere in a wider span says nothing about this claim.
    """
    tokens = set(content_tokens(claim))
    if not tokens:
        return False
    best, closest = 0.0, ""
    for sentence in split_sentences(span):
        share = len(tokens & set(content_tokens(sentence.text))) / len(tokens)
        if share > best:
            best, closest = share, sentence.text
    if best < MIN_NEGATION_SPAN_COVERAGE:
        return False
    return bool(NEGATION.search(fold(claim))) != bool(NEGATION.search(fold(closest)))
