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
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from evigate.rules.text import numbers
from evigate.rules.text.numbers import (
    APPROXIMATE_TOLERANCE,
    Dimension,
    close,
    evidence_number,
    format_number,
    key_unit,
    label_of,
    labelled_counts,
    number_starts,
    standalone_at,
    to_float,
    unit_of,
)
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

__all__ = ["APPROXIMATE_TOLERANCE", "ENTITY_KINDS", "Dimension", "Entity", "EntityKind", "entity_occurs",
           "extract_entities", "format_number", "number_occurs"]


@dataclass(frozen=True, slots=True)
class Entity:
    """One entity found in a text. Numbers carry their value in the dimension's base unit (seconds, %, bytes)."""

    kind: EntityKind
    text: str
    value: float | None = None
    dimension: Dimension | None = None
    raw_value: float | None = None
    digits: int = 0
    approximate: bool = False
    has_unit: bool = False
    exact: str = ""
    """A number's exact decimal text (``1723435438``, ``5.3``): long integers are compared digit for digit."""
    label: str = ""
    """The word that labels a bare count in the claim (``4 failed`` → ``failed``)."""

    @property
    def is_key_value(self) -> bool:
        """Whether a number is significant enough to be a forged key value: it has a unit or two or more digits."""
        return self.kind != "number" or self.has_unit or self.digits >= 2


def normalize(text: str) -> str:
    """NFKC only (full-width digits, ％ and letters become ASCII); case is kept for the code patterns."""
    return unicodedata.normalize("NFKC", text) if not text.isascii() else text


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
                add(match.start(), match.end(), vocabulary.names[match.group(0)], replace=True)  # type: ignore
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


# -- finding an entity in evidence ----------------------------------------------------------------------------------


def _matches(entity: Entity, parsed: tuple[float, Dimension | None, float, int], tolerance: float) -> bool:
    value, dimension, raw, _ = parsed
    assert entity.raw_value is not None
    if entity.dimension is None or dimension is None:
        return close(raw, entity.raw_value, tolerance)
    return dimension == entity.dimension and entity.value is not None and close(value, entity.value, tolerance)


def _matches_at(entity: Entity, haystack: str, start: int) -> bool:
    parsed = evidence_number(haystack, start)
    if parsed is None:
        return False
    if _matches(entity, parsed, 1e-9):
        return True
    _, dimension, raw, _ = parsed
    if dimension is None and entity.dimension is not None:
        key_dimension, scale = key_unit(haystack, start)
        if key_dimension is None:
            # A bare number with a unit added ("took 5300" → "5300ms"): the value as written is what counts.
            return close(raw, entity.raw_value or 0.0)
        return key_dimension == entity.dimension and entity.value is not None and close(raw * scale, entity.value)
    return False


def _approximately_at(entity: Entity, haystack: str, start: int) -> bool:
    """An approximate value ("约 5 秒") matches a value of the same dimension within the tolerance; an
    approximate value with a unit never matches a bare number, which would make "约 9 秒" match any "10"."""
    parsed = evidence_number(haystack, start)
    if parsed is None:
        return False
    value, dimension, raw, _ = parsed
    if entity.dimension is None:
        return close(raw, entity.raw_value or 0.0, APPROXIMATE_TOLERANCE)
    if dimension is None:
        dimension, scale = key_unit(haystack, start)
        value = raw * scale
    return dimension == entity.dimension and close(value, entity.value or 0.0, APPROXIMATE_TOLERANCE)


MAX_OCCURRENCES = 400


def number_occurs(entity: Entity, haystack: str) -> bool:
    """Whether a number entity occurs by value in evidence text (units normalised, approximations loose)."""
    if entity.raw_value is None:
        return False
    if entity.approximate:
        return any(_approximately_at(entity, haystack, start) for start in number_starts(haystack))
    if "/" in entity.exact:  # a ratio (1/1 READY, retry 2/3) is one value, compared whole
        return _ratio_occurs(entity.exact, haystack)
    if entity.label and entity.dimension is None:
        counts = labelled_counts(haystack).get(entity.label)
        if counts is not None:
            return entity.exact in counts  # the evidence labels its counts: "4 failed" must be a failed count
    exact = entity.exact or format_number(entity.raw_value) or ""
    for form in numbers.search_forms(exact, entity.value, entity.dimension):
        start = haystack.find(form)
        seen = 0
        while start != -1 and seen < MAX_OCCURRENCES:
            seen += 1
            if standalone_at(haystack, start, start + len(form)):
                if entity.dimension is None:
                    return True  # a bare number matches the same number whatever unit follows it
                if entity.dimension is not None and _matches_at(entity, haystack, start):
                    return True
            start = haystack.find(form, start + 1)
    return False


def _found_where(needle: str, haystack: str, accept: Callable[[int, int], bool]) -> bool:
    """Whether ``needle`` occurs in ``haystack`` at a place ``accept(start, end)`` takes (bounded scan)."""
    start, seen = haystack.find(needle), 0
    while start != -1 and seen < MAX_OCCURRENCES:
        if accept(start, start + len(needle)):
            return True
        start, seen = haystack.find(needle, start + 1), seen + 1
    return False


def _whole_word(word: str, haystack: str) -> bool:
    def bounded(start: int, end: int) -> bool:
        before = haystack[start - 1] if start else " "
        after = haystack[end:end + 1] or " "
        return not (before.isalnum() or before in "_-") and not (after.isalnum() or after in "_-")

    return _found_where(word, haystack, bounded)


def _ratio_occurs(ratio: str, haystack: str) -> bool:
    return _found_where(ratio, haystack, lambda start, end: standalone_at(haystack, start, end))


def entity_occurs(entity: Entity, haystack: str) -> bool:
    """Whether an entity occurs in evidence text: numbers by value with units normalised, others verbatim.

    Names compare as written, lower-cased or upper-cased (``Payment-Service`` finds ``payment-service``) without
    case-folding the evidence, which would cost more than the rest of a validation on a 1 MB session.
    """
    if entity.kind == "number":
        return number_occurs(entity, haystack)
    needle = normalize(entity.text)
    if entity.kind == "time":
        # "2024-05-01 10:05" also matches "2024-05-01T10:05:12"; "05-01" (from 5月1日) also matches "5-1".
        parts = [part for part in re.split(r"[ tT]", needle) if part]
        return all(part in haystack or part.lstrip("0").replace("-0", "-") in haystack for part in parts)
    if entity.kind == "reason":
        # As written or upper-case anywhere; lower-case only as a whole word ("pods are running" states Running).
        return needle in haystack or needle.upper() in haystack or _whole_word(needle.lower(), haystack)
    if any(variant in haystack for variant in _case_variants(needle)):
        return True
    if entity.kind == "version":
        return _version_occurs(needle, haystack)
    return False


_VERSION_CORE = re.compile(r"v?(\d+(?:\.\d+)+(?:-[0-9A-Za-z.]+)?)$")


def _version_occurs(needle: str, haystack: str) -> bool:
    """``v1.30.4`` also matches ``1.30.4``; ``chart-0.22.1`` matches ``chart`` … ``0.22.1`` written apart."""
    core = _VERSION_CORE.search(needle)
    if core is None:
        return False
    number = core.group(1)
    prefix = needle[:core.start()].rstrip("-")
    if not _found_where(number, haystack, lambda start, end: standalone_version(haystack, start, end)):
        return False
    return not prefix or any(variant in haystack for variant in _case_variants(prefix))


def standalone_version(haystack: str, start: int, end: int) -> bool:
    """Whether ``haystack[start:end]`` is a whole version number, not the start or end of a longer one."""
    before = haystack[start - 1] if start else " "
    after = haystack[end:end + 2]
    return not (before.isdigit() or before == ".") and not (
        after[:1].isdigit() or (after[:1] == "." and after[1:2].isdigit())
    )


@lru_cache(maxsize=8192)
def _case_variants(needle: str) -> tuple[str, ...]:
    """The needle as written, lower-cased and upper-cased, without repeats (each is a scan of the evidence)."""
    return tuple(dict.fromkeys((needle, needle.lower(), needle.upper())))
