"""Numbers in evidence: units, standalone occurrences, labelled counts and value comparison.

A claim's number is searched in evidence by value: units normalised (``5.3 秒`` = ``5.3s`` = ``5300ms``,
``1Gi`` = ``1024Mi``), long integers digit for digit (a Unix timestamp or a byte count is never rounded), a bare
number only where it stands alone (not inside ``app-05``, ``c5b1``, ``10:05`` or ``2024-05-01``), and a count
with its label (``4 failed`` is checked against the numbers the evidence labels ``failed``, so ``0 Failed``
elsewhere in a table does not lend ``4 failed`` its support).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Literal

from evigate.rules.thresholds import THRESHOLDS

Dimension = Literal["time", "percent", "bytes", "times"]

NUMBER = r"([1-9]\d{0,2}(?:,\d{3})+|\d+)(?:\.(\d+))?"
UNITS = (
    r"ms|msec|millis(?:econds?)?|毫秒|μs|µs|us|微秒|secs?|seconds?|秒钟|秒|s|mins?|minutes?|分钟|hrs?|hours?|小时|h"
    r"|days?|天|d|%|kib|kb|ki|mib|mb|mi|gib|gb|gi|tib|tb|ti|bytes?|b|倍|×(?![A-Za-z0-9])|x(?![A-Za-z0-9])"
)
WORD_UNITS = r"st|nd|rd|th|km|cm|mm|nm|kg|mg|lbs?|ft|mph|kph|rpm|k|bn"
"""Suffixes a number carries that no dimension here converts: ordinals (21st, 21th), lengths, weights, "3.2k". Such a
number is compared by its digits ("15.5km" is 15.5, never the 15 before its point)."""
_WORD_UNIT_AFTER = re.compile(rf"(?:{WORD_UNITS})(?![A-Za-z0-9_])")
_COMPOUND_AFTER = re.compile(r"-[a-z]{3,}(?:-[a-z]+)*(?![A-Za-z0-9_])")
"""A number joined to a word: "17-year-old", "3.45-mile", "5-star" (the number stands alone; "5-abc1", "2024-05"
do not)."""
_UNITS_AND_TEENS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
                    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
NUMBER_WORDS: dict[str, int] = {word: value for value, word in enumerate(_UNITS_AND_TEENS, start=2)} | {
    word: 10 * tens for tens, word in enumerate(_TENS, start=2)
}
"""English number words a bare count may be written as ("three retries" = "3 retries"). Not "one": it is as often a
pronoun ("one of the pods") as a count."""
_WORD_OF_NUMBER = {value: word for word, value in NUMBER_WORDS.items()}
_NUMBER_AT = re.compile(rf"{NUMBER}(?:\s?({UNITS})(?![A-Za-z])|(m)(?![A-Za-z]))?", re.IGNORECASE)
_NUMBER_ANYWHERE = re.compile(
    rf"(?<![A-Za-z0-9_.]){NUMBER}(?:\s?({UNITS})(?![A-Za-z])|(m)(?![A-Za-z]))?", re.IGNORECASE
)

_UNITS: tuple[tuple[tuple[str, ...], Dimension, float], ...] = (
    (("ms", "msec", "millis", "millisecond", "milliseconds", "毫秒"), "time", 1e-3),
    (("μs", "µs", "us", "微秒"), "time", 1e-6),
    (("s", "sec", "secs", "second", "seconds", "秒", "秒钟"), "time", 1.0),
    (("m", "min", "mins", "minute", "minutes", "分钟"), "time", 60.0),
    (("h", "hr", "hrs", "hour", "hours", "小时"), "time", 3600.0),
    (("d", "day", "days", "天"), "time", 86400.0),
    (("%",), "percent", 1.0),
    (("b", "byte", "bytes"), "bytes", 1.0),
    (("kb", "kib", "ki"), "bytes", 1024.0),
    (("mb", "mib", "mi"), "bytes", 1024.0**2),
    (("gb", "gib", "gi"), "bytes", 1024.0**3),
    (("tb", "tib", "ti"), "bytes", 1024.0**4),
    (("x", "×", "倍"), "times", 1.0),
)
UNIT_SCALE: dict[str, tuple[Dimension, float]] = {
    name: (dimension, scale) for names, dimension, scale in _UNITS for name in names
}

# Forms a value may be written in, per dimension, so evidence can be searched with plain substring finds.
_FORM_SCALES: dict[str, tuple[float, ...]] = {
    "time": (1e-3, 1.0, 60.0, 3600.0),
    "percent": (1.0,),
    "bytes": (1.0, 1024.0, 1024.0**2, 1024.0**3),
    "times": (1.0,),
}
# A bare number in evidence takes its unit from a key such as "latency_ms": 5300 or elapsed_seconds=5.3.
_KEY_UNIT = re.compile(
    r"(?:[_\-]|\b)(ms|millis|milliseconds|sec|secs|seconds|pct|percent|bytes|kb|mb|gb)[\"']?\s*[:=]\s*[\"']?$",
    re.IGNORECASE,
)
_KEY_UNIT_ALIAS = {"pct": "%", "percent": "%", "millis": "ms", "milliseconds": "ms"}

# A count and the word that labels it in evidence: "Failed: 0", "restarts=3", "4 failed", "(1 Ready)".
_LABEL_BEFORE = re.compile(r"(?<![A-Za-z])([A-Za-z]{3,})[ \t]*[:=][ \t]*(\d+)(?![\d.,]|[A-Za-z])|"
                           r"(?<![A-Za-z])([A-Za-z]{3,})[ \t]+(\d+)(?![\d.,:]|[A-Za-z])")
_LABEL_AFTER = re.compile(r"(?<![\w.,:\-])(\d+)[ \t]?([A-Za-z]{3,})(?![A-Za-z])")
_LABEL_WORDS = frozenset({
    "failed", "failure", "error", "succeeded", "success", "ready", "active", "running", "pending", "restart",
    "retry", "attempt", "replica", "pod", "node", "container", "job", "warning", "critical", "alert", "result",
    "completion", "available", "desired", "current", "updated", "unavailable", "total", "count", "limit", "evicted",
    "killed", "crash", "request", "timeout", "connection", "thread", "instance", "event", "item", "hit", "miss",
})
"""Only these words label a count (singular form): the word after a number is often a unit-like noun."""
APPROXIMATE_TOLERANCE = THRESHOLDS.text.approximate_tolerance


def singular(word: str) -> str:
    """A count label lower-cased and made singular ("Restarts" → "restart", "retries" → "retry")."""
    word = word.casefold()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and word[:-2].endswith(("ss", "sh", "ch", "x")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def label_of(word: str | None) -> str:
    """The label a word gives a count, or "" when it is no label word."""
    if not word:
        return ""
    label = singular(word)
    return label if label in _LABEL_WORDS else ""


def to_float(integer: str, fraction: str | None) -> float:
    return float(integer.replace(",", "") + ("." + fraction if fraction else ""))


def canonical_digits(integer: str, fraction: str | None) -> str:
    """Exact decimal text of a number as written: no grouping commas, no trailing fraction zeros (leading zeros
    stay: "+0100" and "053" are written so)."""
    digits = integer.replace(",", "")
    fraction = (fraction or "").rstrip("0")
    return f"{digits}.{fraction}" if fraction else digits


def unit_of(unit: str | None, minute: str | None) -> tuple[Dimension | None, float]:
    name = (unit or minute or "").casefold()
    if not name:
        return None, 1.0
    return UNIT_SCALE.get(name, (None, 1.0))


def format_number(value: float) -> str | None:
    """Plain decimal text of a value (no exponent, no trailing zeros), or None when it would not be written so."""
    try:
        decimal = Decimal(f"{value:.15g}").normalize()
    except InvalidOperation:
        return None
    text = format(decimal, "f")
    if "." in text and len(text.split(".", 1)[1]) > 4:
        return None
    return text


def search_forms(raw_text: str, value: float | None, dimension: Dimension | None) -> frozenset[str]:
    """Texts under which a number may be written in evidence: as written, with grouping, in the dimension's units."""
    forms = {raw_text, raw_text.rstrip("0").rstrip(".") if "." in raw_text else raw_text}
    if "." not in raw_text and len(raw_text) > 3:
        forms.add(f"{int(raw_text):,}")  # 5,300 as logs print it
    if dimension is not None and value is not None:
        for scale in _FORM_SCALES[dimension]:
            forms.add(format_number(value / scale) or "")
    elif raw_text.isdigit() and int(raw_text) in _WORD_OF_NUMBER:
        forms.add(_WORD_OF_NUMBER[int(raw_text)])  # a bare count may be spelt out: "three euros" holds €3
    forms.discard("")
    return frozenset(forms)


def close(left: float, right: float, tolerance: float = 1e-9) -> bool:
    return abs(left - right) <= tolerance * max(1.0, abs(left), abs(right))


def evidence_number(haystack: str, position: int) -> tuple[float, Dimension | None, float, int] | None:
    """(value in base unit, dimension, raw value, end) of the number that starts at ``position`` in evidence."""
    match = _NUMBER_AT.match(haystack, position)
    if match is None:
        return None
    integer, fraction, unit, minute = match.groups()
    raw = to_float(integer, fraction)
    dimension, scale = unit_of(unit, minute)
    if dimension is None and position and haystack[position - 1] in "x×":
        dimension = "times"  # x16
    return raw * scale, dimension, raw, match.end()


def key_unit(haystack: str, position: int) -> tuple[Dimension | None, float]:
    """The unit a JSON-ish key gives a bare number: ``"latency_ms": 5300``, ``elapsed_seconds=5.3``."""
    key = _KEY_UNIT.search(haystack[max(0, position - 40):position])
    if key is None:
        return None, 1.0
    name = key.group(1).casefold()
    return unit_of(_KEY_UNIT_ALIAS.get(name, name), None)


def standalone_at(haystack: str, start: int, end: int) -> bool:
    """Whether the digits at ``haystack[start:end]`` are a number of their own, not part of a name, id or time."""
    before = haystack[start - 1] if start else " "
    if (before.isascii() and before.isalnum() and before not in "xX") or before in "_.":
        return False
    if start >= 2 and ((before == "," and haystack[start - 2].isdigit())
                       or (before == "-" and haystack[start - 2].isascii() and haystack[start - 2].isalnum())):
        return False  # 5,300 (grouping), app-05, 2024-05; "TCP,9094" and " -5" stand alone
    if before == ":" and start >= 2 and haystack[start - 2].isdigit():
        return False  # 10:05
    after = haystack[end:end + 2]
    if after[:1].isdigit() or (after[:1] in ".,:" and after[1:2].isdigit()):
        return False
    if after[:1] == "-" and after[1:2].isalnum():
        return _COMPOUND_AFTER.match(haystack, end) is not None  # 17-year-old stands alone; 5-abc1, 2024-05 not
    if after[:1].isalpha() and after[:1].isascii():
        parsed = _NUMBER_AT.match(haystack, start)
        return bool(parsed and (parsed.group(3) or parsed.group(4)) and parsed.end() > end) or (
            _WORD_UNIT_AFTER.match(haystack, end) is not None)
    return True


@lru_cache(maxsize=64)
def labelled_counts(haystack: str) -> dict[str, frozenset[str]]:
    """label → the counts the evidence writes next to it ("Failed: 0", "4 failed", "(1 Ready)")."""
    found: dict[str, set[str]] = {}
    for match in _LABEL_BEFORE.finditer(haystack[:200_000]):
        word, digits = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        label = label_of(word)
        if label:
            found.setdefault(label, set()).add(canonical_digits(digits, None))
    for match in _LABEL_AFTER.finditer(haystack[:200_000]):
        label = label_of(match.group(2))
        if label:
            found.setdefault(label, set()).add(canonical_digits(match.group(1), None))
    return {label: frozenset(counts) for label, counts in found.items()}


@lru_cache(maxsize=64)
def number_starts(haystack: str) -> tuple[int, ...]:
    """Where each number of a haystack starts (cached: the same outputs are searched for claim after claim)."""
    return tuple(match.start() for match in _NUMBER_ANYWHERE.finditer(haystack[:200_000]))
