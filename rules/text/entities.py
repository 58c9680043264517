"""Entity extraction for grounding checks: numbers with units, times, error codes, identifiers, service names.

Works on Chinese, English and mixed text without word segmentation. Claims are read strictly (only clear
entities); evidence is searched leniently (case-insensitive, numbers by value with units normalised, so
``5.3 秒`` = ``5.3s`` = ``5300ms`` and ``92%`` = ``92 %``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Literal

EntityKind = Literal["number", "time", "error_code", "identifier", "service"]
Dimension = Literal["time", "percent", "bytes"]

_NUMBER = r"(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?"
_UNITS = (
    r"ms|msec|millis(?:econds?)?|毫秒|μs|µs|us|微秒|secs?|seconds?|秒钟|秒|s|mins?|minutes?|分钟|hrs?|hours?|小时|h"
    r"|days?|天|d|%|kib|kb|mib|mb|gib|gb|tb|bytes?|b"
)
_NUMBER_WITH_UNIT = re.compile(
    rf"(?<![A-Za-z0-9_.]){_NUMBER}(?:\s?({_UNITS})(?![A-Za-z])|(m)(?![A-Za-z]))?", re.IGNORECASE
)
_NUMBER_AT = re.compile(rf"{_NUMBER}(?:\s?({_UNITS})(?![A-Za-z])|(m)(?![A-Za-z]))?", re.IGNORECASE)

_UNIT_SCALE: dict[str, tuple[Dimension, float]] = {}
for _names, _dimension, _scale in (
    (("ms", "msec", "millis", "millisecond", "milliseconds", "毫秒"), "time", 1e-3),
    (("μs", "µs", "us", "微秒"), "time", 1e-6),
    (("s", "sec", "secs", "second", "seconds", "秒", "秒钟"), "time", 1.0),
    (("m", "min", "mins", "minute", "minutes", "分钟"), "time", 60.0),
    (("h", "hr", "hrs", "hour", "hours", "小时"), "time", 3600.0),
    (("d", "day", "days", "天"), "time", 86400.0),
    (("%",), "percent", 1.0),
    (("b", "byte", "bytes"), "bytes", 1.0),
    (("kb", "kib"), "bytes", 1024.0),
    (("mb", "mib"), "bytes", 1024.0**2),
    (("gb", "gib"), "bytes", 1024.0**3),
    (("tb",), "bytes", 1024.0**4),
):
    for _name in _names:
        _UNIT_SCALE[_name] = (_dimension, _scale)  # type: ignore[assignment]

# Forms a value may be written in, per dimension, so evidence can be searched with plain substring finds.
_FORM_SCALES: dict[str, tuple[float, ...]] = {
    "time": (1e-3, 1.0, 60.0, 3600.0),
    "percent": (1.0,),
    "bytes": (1.0, 1024.0, 1024.0**2, 1024.0**3),
}
# A bare number in evidence takes its unit from a key such as "latency_ms": 5300 or elapsed_seconds=5.3.
_KEY_UNIT = re.compile(
    r"(?:[_\-]|\b)(ms|millis|milliseconds|sec|secs|seconds|pct|percent|bytes|kb|mb|gb)[\"']?\s*[:=]\s*[\"']?$",
    re.IGNORECASE,
)
_KEY_UNIT_ALIAS = {"pct": "%", "percent": "%", "millis": "ms", "milliseconds": "ms"}

_APPROXIMATE_BEFORE = re.compile(
    r"(?:约|大约|大概|将近|接近|近|超过|逾|不到|不足|高于|低于|~|≈|about|approx\.?|approximately|around|nearly|"
    r"over|more than|less than|under|above|below|up to|>=|<=|>|<|≥|≤)\s*$",
    re.IGNORECASE,
)
_APPROXIMATE_AFTER = re.compile(r"^\s*(?:左右|以上|以下|多|余|\+|or more|or so)", re.IGNORECASE)
APPROXIMATE_TOLERANCE = 0.15

# One alternation, scanned once: at each position the first alternative that matches wins, so a service name
# swallows its digits ("db-3" is not the number 3) and a timestamp is not three numbers.
_ENTITY = re.compile("|".join([
    r"(?P<cn_date>(?:(?P<year>\d{4})年)?(?P<month>\d{1,2})月(?P<day>\d{1,2})[日号])",
    r"(?P<datetime>(?<!\d)\d{4}[-/]\d{1,2}[-/]\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?!\d))",
    r"(?P<clock>(?<![\d:])\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?![\d:]))",
    r"(?P<uuid>(?<![0-9A-Za-z])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"(?![0-9A-Za-z]))",
    r"(?P<error_code>(?<![A-Za-z0-9_])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![A-Za-z0-9_]))",
    r"(?P<dashed_code>(?<![A-Za-z0-9_\-])[A-Z]{2,}-\d{2,}(?![A-Za-z0-9_\-]))",
    r"(?P<exception>(?<![A-Za-z0-9_.])(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9]*(?:Exception|Error)"
    r"(?![A-Za-z0-9_]))",
    r"(?P<hex_id>(?<![0-9A-Za-z_])(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}(?![0-9A-Za-z_]))",
    r"(?P<prefixed_id>(?<![A-Za-z0-9_\-])[A-Za-z]{1,12}[-_]?\d{3,}(?:[-_][A-Za-z0-9]+)*(?![A-Za-z0-9_]))",
    r"(?P<service>(?<![A-Za-z0-9_\-.])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![A-Za-z0-9_\-]))",
    rf"(?P<number>(?<![A-Za-z0-9_.])(?P<integer>\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.(?P<fraction>\d+))?"
    rf"(?:\s?(?P<unit>(?i:{_UNITS}))(?![A-Za-z])|(?P<minute>[mM])(?![A-Za-z]))?)",
]))
_KIND_OF_GROUP: dict[str, EntityKind] = {
    "datetime": "time", "clock": "time", "uuid": "identifier", "error_code": "error_code",
    "dashed_code": "error_code", "exception": "error_code", "hex_id": "identifier", "prefixed_id": "identifier",
    "service": "service",
}

COMMON_HYPHENATED_WORDS = frozenset({
    "read-only", "read-write", "built-in", "e-mail", "real-time", "follow-up", "up-to-date", "long-running",
    "non-blocking", "time-out", "re-try", "pre-check", "on-call", "opt-in", "opt-out", "end-to-end", "one-time",
    "step-by-step", "out-of-memory", "utf-8", "utf-16", "x-ray", "key-value", "high-availability", "fail-over",
    "write-through", "write-back", "cache-aside", "round-robin", "health-check", "self-healing", "rate-limit",
    "rate-limiting", "back-off", "back-pressure", "p-value", "top-k", "well-known", "so-called", "non-critical",
})


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

    @property
    def is_key_value(self) -> bool:
        """Whether a number is significant enough to be a forged key value: it has a unit or two or more digits."""
        return self.kind != "number" or self.has_unit or self.digits >= 2


def normalize(text: str) -> str:
    """NFKC only (full-width digits, ％ and letters become ASCII); case is kept for the code patterns."""
    return unicodedata.normalize("NFKC", text) if not text.isascii() else text


def _to_float(integer: str, fraction: str | None) -> float:
    return float(integer.replace(",", "") + ("." + fraction if fraction else ""))


def _is_approximate(text: str, start: int, end: int) -> bool:
    return bool(_APPROXIMATE_BEFORE.search(text[max(0, start - 12):start])) or bool(
        _APPROXIMATE_AFTER.match(text[end:end + 8])
    )


def _unit_of(unit: str | None, minute: str | None) -> tuple[Dimension | None, float]:
    name = (unit or minute or "").casefold()
    if not name:
        return None, 1.0
    return _UNIT_SCALE.get(name, (None, 1.0))


def extract_entities(text: str) -> list[Entity]:
    """The clear entities of a claim or an answer: every number, time, error code, identifier and service name."""
    return list(_extract(text or ""))


@lru_cache(maxsize=8192)
def _extract(text: str) -> tuple[Entity, ...]:
    """Cached: claims, excerpts and answers are re-read across rules and rounds."""
    text = normalize(text)
    found: list[Entity] = []
    for match in _ENTITY.finditer(text):
        group = match.lastgroup
        token = match.group(0)
        if group == "number":
            integer, fraction = match.group("integer"), match.group("fraction")
            raw = _to_float(integer, fraction)
            dimension, scale = _unit_of(match.group("unit"), match.group("minute"))
            found.append(Entity(
                kind="number", text=token.strip(), value=raw * scale, dimension=dimension, raw_value=raw,
                digits=len(integer.replace(",", "")) + len(fraction or ""),
                approximate=_is_approximate(text, match.start(), match.end()), has_unit=dimension is not None,
            ))
        elif group == "cn_date":
            canonical = f"{int(match.group('month')):02d}-{int(match.group('day')):02d}"
            year = match.group("year")
            found.append(Entity(kind="time", text=f"{year}-{canonical}" if year else canonical))
        elif group in _KIND_OF_GROUP and not (group == "service" and token in COMMON_HYPHENATED_WORDS):
            found.append(Entity(kind=_KIND_OF_GROUP[group], text=token))
    return tuple(found)


def format_number(value: float) -> str | None:
    """Plain decimal text of a value (no exponent, no trailing zeros), or None when it would not be written so."""
    try:
        decimal = Decimal(f"{value:.9g}").normalize()
    except InvalidOperation:
        return None
    text = format(decimal, "f")
    if "." in text and len(text.split(".", 1)[1]) > 4:
        return None
    return text


@lru_cache(maxsize=8192)
def _search_forms(entity: Entity) -> frozenset[str]:
    forms: set[str] = set()
    if entity.raw_value is not None:
        forms.add(format_number(entity.raw_value) or "")
        if entity.raw_value >= 1000 and entity.raw_value.is_integer():
            forms.add(f"{int(entity.raw_value):,}")  # 5,300 as logs print it
    if entity.dimension is not None and entity.value is not None:
        for scale in _FORM_SCALES[entity.dimension]:
            forms.add(format_number(entity.value / scale) or "")
    forms.discard("")
    return frozenset(forms)


def _close(left: float, right: float, tolerance: float = 1e-6) -> bool:
    return abs(left - right) <= tolerance * max(1.0, abs(left), abs(right))


def _evidence_number(haystack: str, position: int) -> tuple[float, Dimension | None, float] | None:
    """(value in base unit, dimension, raw value) of the number that starts at ``position`` in evidence text."""
    match = _NUMBER_AT.match(haystack, position)
    if match is None:
        return None
    integer, fraction, unit, minute = match.groups()
    raw = _to_float(integer, fraction)
    dimension, scale = _unit_of(unit, minute)
    return raw * scale, dimension, raw


def _key_unit(haystack: str, position: int) -> tuple[Dimension | None, float]:
    """The unit a JSON-ish key gives a bare number: ``"latency_ms": 5300``, ``elapsed_seconds=5.3``."""
    key = _KEY_UNIT.search(haystack[max(0, position - 40):position])
    if key is None:
        return None, 1.0
    name = key.group(1).casefold()
    return _unit_of(_KEY_UNIT_ALIAS.get(name, name), None)


def _matches(entity: Entity, evidence: tuple[float, Dimension | None, float], tolerance: float) -> bool:
    value, dimension, raw = evidence
    assert entity.raw_value is not None
    if entity.dimension is None or dimension is None:
        return _close(raw, entity.raw_value, tolerance)
    return dimension == entity.dimension and entity.value is not None and _close(value, entity.value, tolerance)


def _matches_at(entity: Entity, haystack: str, start: int, tolerance: float) -> bool:
    parsed = _evidence_number(haystack, start)
    if parsed is None:
        return False
    if _matches(entity, parsed, tolerance):
        return True
    _, dimension, raw = parsed
    if dimension is None and entity.dimension is not None:
        key_dimension, scale = _key_unit(haystack, start)
        return key_dimension == entity.dimension and entity.value is not None and _close(
            raw * scale, entity.value, tolerance
        )
    return False


def _approximately_at(entity: Entity, haystack: str, start: int) -> bool:
    """An approximate value ("约 5 秒") matches a value of the same dimension within the tolerance; an
    approximate value with a unit never matches a bare number, which would make "约 9 秒" match any "10"."""
    parsed = _evidence_number(haystack, start)
    if parsed is None:
        return False
    value, dimension, raw = parsed
    if entity.dimension is None:
        return _close(raw, entity.raw_value or 0.0, APPROXIMATE_TOLERANCE)
    if dimension is None:
        dimension, scale = _key_unit(haystack, start)
        value = raw * scale
    return dimension == entity.dimension and _close(value, entity.value or 0.0, APPROXIMATE_TOLERANCE)


MAX_OCCURRENCES = 400


def number_occurs(entity: Entity, haystack: str) -> bool:
    """Whether a number entity occurs by value in evidence text (units normalised, approximations loose)."""
    if entity.raw_value is None:
        return False
    if entity.approximate:
        return any(_approximately_at(entity, haystack, start) for start in _number_starts(haystack))
    for form in _search_forms(entity):
        start = haystack.find(form)
        seen = 0
        while start != -1 and seen < MAX_OCCURRENCES:
            seen += 1
            previous = haystack[start - 1] if start else " "
            if not (previous.isdigit() or previous in ".,"):
                after = haystack[start + len(form):start + len(form) + 2]
                longer = after[:1].isdigit() or (after[:1] in ".," and after[1:2].isdigit())
                if entity.dimension is None and not longer:
                    return True  # a bare number matches the same number whatever unit follows it
                if _matches_at(entity, haystack, start, 1e-6):
                    return True
            start = haystack.find(form, start + 1)
    return False


def _number_starts(haystack: str) -> list[int]:
    return [match.start() for match in _NUMBER_WITH_UNIT.finditer(haystack[:200_000])]


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
    return any(variant in haystack for variant in _case_variants(needle))


@lru_cache(maxsize=8192)
def _case_variants(needle: str) -> tuple[str, ...]:
    """The needle as written, lower-cased and upper-cased, without repeats (each is a scan of the evidence)."""
    return tuple(dict.fromkeys((needle, needle.lower(), needle.upper())))
