"""Finding an entity in evidence: numbers by value with units normalised, names as written or re-cased, versions
with or without their ``v`` or chart prefix. Every scan is bounded (:data:`MAX_OCCURRENCES`), since evidence can be
a megabyte of tool output.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from evigate.rules.text import numbers
from evigate.rules.text.entity import Entity, normalize
from evigate.rules.text.numbers import (
    APPROXIMATE_TOLERANCE,
    Dimension,
    close,
    evidence_number,
    format_number,
    key_unit,
    labelled_counts,
    number_starts,
    standalone_at,
)


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


def number_occurs(entity: Entity, haystack: str, *, across_units: bool = True) -> bool:
    """Whether a number entity occurs by value in evidence text (units normalised, approximations loose).

    ``across_units=False`` skips the last resort, every number of the haystack compared by value (see
    :func:`entity_occurs`)."""
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
    if entity.dimension is not None and across_units:
        # Converting may leave more decimals than a searchable form keeps (2000.07ms is 2.00007s), or a form with
        # trailing zeros (2000ms as 2.0000s): compare every number of the evidence by value, in the same dimension.
        same_dimension = _numbers_by_dimension(haystack).get(entity.dimension, ())
        return any(_matches(entity, parsed, 1e-9) for parsed in same_dimension)
    return False


def compared_across_units(entity: Entity) -> bool:
    """Whether :func:`number_occurs` may end by comparing every number of the evidence with the entity by value
    (what ``across_units=False`` leaves out): an exact number with a unit, not a ratio."""
    return (entity.kind == "number" and entity.raw_value is not None and not entity.approximate
            and "/" not in entity.exact and entity.dimension is not None)


@lru_cache(maxsize=256)
def _numbers_by_dimension(haystack: str) -> dict[str, tuple[Any, ...]]:
    """Every number of a haystack that carries its own unit, parsed once and grouped by dimension (the same outputs
    are searched for claim after claim, and most numbers have no unit at all)."""
    grouped: dict[str, list[Any]] = {}
    for start in number_starts(haystack):
        parsed = evidence_number(haystack, start)
        if parsed is not None and parsed[1] is not None:
            grouped.setdefault(parsed[1], []).append(parsed)
    return {dimension: tuple(found) for dimension, found in grouped.items()}


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


def entity_occurs(entity: Entity, haystack: str, *, across_units: bool = True) -> bool:
    """Whether an entity occurs in evidence text: numbers by value with units normalised, others verbatim.

    Names compare as written, lower-cased or upper-cased (``Payment-Service`` finds ``payment-service``) without
    case-folding the evidence, which would cost more than the rest of a validation on a 1 MB session.
    ``across_units=False`` leaves out the costly last resort for a number with a unit (parsing every number of the
    haystack): a caller searching many texts tries the plain finds in all of them first.
    """
    if entity.kind == "number":
        return number_occurs(entity, haystack, across_units=across_units)
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
