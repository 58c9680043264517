"""Counts a claim states against what the evidence counts: a count given for one window ("rejected=95 in last 10s",
"最近 10 秒内拒绝 95 个") stated without it, and an identifier ("order=88412") stated as a count ("88412 次").

Pure text functions: the ceilings ``window`` and ``identifier`` (``evigate.rules.verdict.ceilings``) use them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from evigate.rules.text.numbers import NUMBER, UNITS, to_float, unit_of
from evigate.rules.text.records import only_record_id

_DURATION = rf"{NUMBER}\s*({UNITS})(?![A-Za-z])"
_WINDOW_AFTER = re.compile(
    rf"(?<![\w.]){NUMBER}(?:\s+[A-Za-z]+)?\s+(?:in|within|over|during|for)\s+(?:the\s+)?(?:last|past|previous)\s+"
    rf"(?:{_DURATION}|(second|minute|hour|day))",
    re.IGNORECASE,
)
"""A count followed by its window: "rejected=95 in last 10s", "95 requests in the past 5 minutes"."""
_WINDOW_BEFORE = re.compile(rf"(?:最近|过去|近)\s*{_DURATION}\s*(?:内|之内|里)?[^\d\n]{{0,12}}?(?<![\w.]){NUMBER}")
"""Its window first, in Chinese: "最近 10 秒内拒绝 95 个"."""
_RATE_WORDS = re.compile(r"\bper\b|\bin (?:the )?(?:last|past)\b|每|最近|过去|/\s*(?:s|sec|min|h|秒|分)", re.IGNORECASE)
_CLAIM_NUMBER = re.compile(rf"(?<![\w.:-]){NUMBER}(?![\d:])")
_CLAIM_DURATION = re.compile(_DURATION, re.IGNORECASE)


def _seconds(integer: str | None, fraction: str | None, unit: str | None, word: str | None = None) -> float | None:
    dimension, scale = unit_of(word or unit, None)
    if dimension != "time":
        return None
    return scale if word else to_float(integer, fraction) * scale if integer else None


def windowed_counts(text: str) -> dict[float, float | None]:
    """Count value → the length in seconds of the window ``text`` gives it (None when unreadable)."""
    counts: dict[float, float | None] = {}
    for match in _WINDOW_AFTER.finditer(text):
        integer, fraction, w_int, w_frac, unit, word = match.groups()
        counts[to_float(integer, fraction)] = _seconds(w_int, w_frac, unit, word)
    for match in _WINDOW_BEFORE.finditer(text):
        w_int, w_frac, unit, integer, fraction = match.groups()
        counts[to_float(integer, fraction)] = _seconds(w_int, w_frac, unit)
    return counts


def drops_window(text: str, excerpts: Iterable[str]) -> bool:
    """Whether ``text`` states a count one of ``excerpts`` gives for a window, with neither that window's length nor
    any per-window wording ("per", "每", "in the last", "/s"): measured on the 0.5B default, "网关拒绝了 16:30 到
    16:50 … 95 个下单请求" from "rejected=95 in last 10s" was labelled direct_observation and made a NORMAL answer."""
    windows: dict[float, float | None] = {}
    for excerpt in excerpts:
        windows.update(windowed_counts(excerpt))
    if not windows or _RATE_WORDS.search(text):
        return False
    stated = {to_float(m.group(1), m.group(2)) for m in _CLAIM_NUMBER.finditer(text)}
    durations = {_seconds(*m.groups()) for m in _CLAIM_DURATION.finditer(text)}
    return any(value in stated and length not in durations for value, length in windows.items())


_COUNTED = re.compile(
    rf"(?<![\w.:-]){NUMBER}\s*(?:次|个|笔|条|起|单|times?\b|requests?\b|errors?\b|failures?\b|calls?\b|timeouts?\b"
    r"|orders?\b|payments?\b|lines?\b|events?\b)",
    re.IGNORECASE,
)
"""A number the claim gives as a count: "88412 次", "95 requests"."""


def identifier_counted(text: str, evidence: Iterable[str]) -> bool:
    """Whether ``text`` states as a count a whole number the evidence gives only as a record's id ("order=88412",
    ``records.only_record_id``), never as a value of its own: measured on the 0.5B default (train, tally-zh-07),
    "商品服务的上游超时次数是 88412 次" from "order=88412 ERR_UPSTREAM_TIMEOUT …" was labelled direct_observation."""
    counted = {match.group(1) for match in _COUNTED.finditer(text) if not match.group(2)}
    evidence = list(evidence)
    return any(only_record_id(number, evidence) for number in counted)
