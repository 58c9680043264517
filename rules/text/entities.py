"""Entity extraction for grounding checks: numbers, times, codes, reasons, versions, addresses, ids and names.

Works on Chinese, English and mixed text without word segmentation. Claims are read strictly (only clear
entities); evidence is searched leniently (case-insensitive, numbers by value with units normalised, so
``5.3 秒`` = ``5.3s`` = ``5300ms`` and ``92%`` = ``92 %``). Entity classes are recognised by shape (``ERR_TIMEOUT``,
``pay-gateway``, ``CrashLoopBackOff``, ``kube_pod_status_phase``, ``v1.30.4``, ``10.244.1.13``, ``x16``), by the
vocabulary in ``terms.yaml`` (Kubernetes reasons and statuses such as ``Evicted``), by context (the name next to
"namespace") and by a deployment's own :class:`~evigate.rules.text.vocabulary.EntityVocabulary`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import cast

from evigate.rules.text.entity import Entity, normalize
from evigate.rules.text.numbers import APPROXIMATE_TOLERANCE, Dimension, format_number, label_of, to_float, unit_of
from evigate.rules.text.occurrence import MAX_OCCURRENCES, entity_occurs, number_occurs, standalone_version
from evigate.rules.text.patterns import (
    APPROXIMATE_AFTER,
    APPROXIMATE_BEFORE,
    CAMEL_HUMPS,
    ENTITY,
    ENTITY_KINDS,
    EVENT_SPAN,
    KIND_OF_GROUP,
    LABEL_AFTER_CLAIM,
    LABEL_BEFORE_CLAIM,
    EntityKind,
    is_common_compound,
    namespace_pattern,
    status_pattern,
    word_set,
)
from evigate.rules.text.vocabulary import EntityVocabulary

# Extraction lives here; the Entity type (entity.py) and finding one in evidence (occurrence.py) are re-exported,
# so `from evigate.rules.text.entities import Entity, entity_occurs, normalize` keeps working.
__all__ = ["APPROXIMATE_TOLERANCE", "ENTITY_KINDS", "MAX_OCCURRENCES", "Dimension", "Entity", "EntityKind",
           "entity_occurs", "extract_entities", "format_number", "normalize", "number_occurs", "standalone_version"]


def _is_approximate(text: str, start: int, end: int) -> bool:
    if EVENT_SPAN.search(text[max(0, start - 16):start]):
        return False
    return bool(APPROXIMATE_BEFORE.search(text[max(0, start - 12):start])) or bool(
        APPROXIMATE_AFTER.match(text[end:end + 8])
    )


def extract_entities(text: str, vocabulary: EntityVocabulary | None = None) -> list[Entity]:
    """The clear entities of a claim or an answer: numbers, times, codes, reasons, versions, addresses, names.

    Names in ``vocabulary`` are entities wherever they occur as whole words, whatever their shape.
    """
    return list(_extract(text or "", vocabulary or None))


def _number(match: re.Match[str], text: str) -> Entity:
    integer, fraction = match.group("integer"), match.group("fraction")
    raw = to_float(integer, fraction)
    dimension, scale = unit_of(match.group("unit"), match.group("minute"))
    label = ""
    if dimension is None:
        after = LABEL_AFTER_CLAIM.match(text, match.end())
        before = LABEL_BEFORE_CLAIM.search(text[max(0, match.start() - 24):match.start()])
        label = label_of(after.group(1) if after else None) or label_of(before.group(1) if before else None)
    return Entity(
        kind="number", text=match.group(0).strip(), value=raw * scale, dimension=dimension, raw_value=raw,
        digits=len(integer.replace(",", "")) + len(fraction or ""),
        approximate=_is_approximate(text, match.start(), match.end()), has_unit=dimension is not None,
        exact=integer.replace(",", "") + (f".{fraction}" if fraction else ""), label=label,
    )


def _shape_entity(match: re.Match[str], text: str, common: frozenset[str]) -> Entity | None:
    group = match.lastgroup
    token = match.group(0)
    if group == "number":
        return _number(match, text)
    if group == "multiplier":
        value = float(match.group("times"))
        return Entity(kind="number", text=token, value=value, dimension="times", raw_value=value,
                      digits=len(match.group("times").replace(".", "")), has_unit=True,
                      exact=match.group("times"))
    if group == "ratio":
        numerator = token.split("/", 1)[0]
        return Entity(kind="number", text=token, value=float(numerator), raw_value=float(numerator),
                      digits=len(token) - 1, exact=token)
    if group == "cn_date":
        canonical = f"{int(match.group('month')):02d}-{int(match.group('day')):02d}"
        year = match.group("year")
        return Entity(kind="time", text=f"{year}-{canonical}" if year else canonical)
    if group == "quoted":
        token = match.group("quoted_name")
    if group == "camel" and len(CAMEL_HUMPS.findall(token)) < 2 and not re.match(r"[A-Z]{2,}[A-Z][a-z]{2}", token):
        return None  # Pod, Kubernetes, GPUs, PVCs are no reasons; OOMKilled is; the status list pins the rest
    if group == "service" and is_common_compound(token):
        return None
    if group in ("mixed", "quoted", "lower_camel") and token.casefold() in common:
        return None
    if group == "ipv6" and len(token) < 6:
        return None
    kind = KIND_OF_GROUP.get(group or "")
    return Entity(kind=kind, text=token) if kind else None


@lru_cache(maxsize=8192)
def _extract(text: str, vocabulary: EntityVocabulary | None) -> tuple[Entity, ...]:
    """Cached: claims, excerpts and answers are re-read across rules and rounds."""
    text = normalize(text)
    common = word_set("common_tokens")
    spans: list[tuple[int, int, Entity]] = []
    for match in ENTITY.finditer(text):
        entity = _shape_entity(match, text, common)
        if entity is not None:
            spans.append((match.start(), match.end(), entity))
    spans.extend(_named(text, vocabulary, spans))
    spans.sort(key=lambda span: span[0])
    return tuple(entity for _, _, entity in spans)


def _named(
    text: str, vocabulary: EntityVocabulary | None, spans: list[tuple[int, int, Entity]]
) -> list[tuple[int, int, Entity]]:
    """Entities shape alone misses: a vocabulary's names and patterns, statuses, names next to "namespace"."""
    found: list[tuple[int, int, Entity]] = []
    taken = list(spans)

    def add(start: int, end: int, kind: EntityKind, replace: bool = False) -> None:
        nonlocal taken
        overlapping = [span for span in taken if not (end <= span[0] or start >= span[1])]
        if overlapping and not replace:
            return
        if overlapping:  # a known name beats the shape it was read as (a vocabulary service "orders-db")
            for span in overlapping:
                if span in spans:
                    spans.remove(span)
                if span in found:
                    found.remove(span)
            taken = [span for span in taken if span not in overlapping]
        span = (start, end, Entity(kind=kind, text=text[start:end]))
        found.append(span)
        taken.append(span)

    if vocabulary:
        if vocabulary.name_pattern is not None:
            for match in vocabulary.name_pattern.finditer(text):
                add(match.start(), match.end(), cast(EntityKind, vocabulary.names[match.group(0)]), replace=True)
        for pattern in vocabulary.compiled_patterns:
            for match in pattern.finditer(text):
                if match.end() > match.start():
                    add(match.start(), match.end(), "identifier", replace=True)
    for match in status_pattern().finditer(text):
        add(match.start(), match.end(), "reason", replace=True)
    stopwords = word_set("name_stopwords")
    for match in namespace_pattern().finditer(text):
        group = "after" if match.group("after") else "before"
        name = match.group(group)
        if name.casefold() in stopwords or name.replace(".", "").isdigit() or not name.isascii():
            continue
        add(match.start(group), match.end(group), "identifier")
    return found
