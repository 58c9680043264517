"""The times a question names, and the window they span: "02:10", "2026-11-28 14:05", "凌晨 2 点多", "晚上 8 点".

Pure regular expressions, no I/O. Each named time is a span: an exact clock time is a point (the window pads it by
``WINDOW_PADDING``); a Chinese hour phrase is as wide as the phrase is vague ("2 点多" is 02:00–03:00, "8 点左右" is
07:30–08:30). A time that is no clock time (25:00, 2026-13-45, 晚上 12 点) is skipped rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

WINDOW_PADDING = timedelta(minutes=15)
"""How far a window reaches either side of a single exact time."""
VAGUE_HOUR = timedelta(minutes=30)
"""How far "8 点" / "8 点左右" reaches either side of the hour."""

CLOCK_TIME = re.compile(
    r"(?:(20\d\d)[-/年](\d{1,2})[-/月](\d{1,2})日?\s*T?\s*)?(?<!\d)([01]?\d|2[0-3])\s*(?:[:：]|点)\s*([0-5]\d)"
    r"(?:\s*[:：]\s*([0-5]\d))?"
)
ZH_HOUR = re.compile(
    r"(凌晨|清晨|早上|早晨|上午|中午|午后|下午|傍晚|晚上|夜里|夜间|半夜)?\s*(?<!\d)(\d{1,2})\s*[点時时]"
    r"(?:\s*(半|[0-5]?\d\s*分)|\s*(多|过|左右|前后|许))?"
)
AFTERNOON = frozenset({"午后", "下午", "傍晚", "晚上", "夜里", "夜间"})


@dataclass(frozen=True)
class NamedTime:
    """A time the question names: the moment itself and the span it stands for."""

    moment: datetime
    start: datetime
    end: datetime


def named_times(query: str, today: date) -> list[NamedTime]:
    """The times ``query`` names, in order of appearance; bare clock times fall on ``today``."""
    found: list[tuple[int, NamedTime]] = []
    taken: list[tuple[int, int]] = []
    for match in CLOCK_TIME.finditer(query):
        year, month, day, hour, minute, second = match.groups()
        try:
            base = datetime(int(year), int(month), int(day)) if year else datetime(today.year, today.month, today.day)
            moment = base.replace(hour=int(hour), minute=int(minute), second=int(second or 0))
        except ValueError:  # 2026-13-45 is not a date; skip it rather than guess
            continue
        found.append((match.start(), NamedTime(moment, moment, moment)))
        taken.append(match.span())
    for match in ZH_HOUR.finditer(query):
        if any(start < match.end() and match.start() < end for start, end in taken):
            continue  # "2点10" is a clock time already
        named = _zh_hour(match, today)
        if named is not None:
            found.append((match.start(), named))
    return [named for _, named in sorted(found, key=lambda pair: pair[0])]


def _zh_hour(match: re.Match[str], today: date) -> NamedTime | None:
    period, hour_text, exact, vague = match.groups()
    hour = int(hour_text)
    if not (period or exact or vague):
        return None  # a bare "3 点" may be "3 points" (3 点建议): only a period or a minute makes it a time
    if period in AFTERNOON:
        if hour == 12:
            return None  # 晚上 12 点 is midnight of which day: not guessed
        hour += 12 if hour < 12 else 0
    elif period == "中午" and hour < 6:
        hour += 12  # 中午 1 点 is 13:00
    if hour > 23:
        return None
    minute = 30 if exact == "半" else int(exact.rstrip("分").strip()) if exact else 0
    moment = datetime(today.year, today.month, today.day, hour, minute)
    if exact:
        return NamedTime(moment, moment, moment)
    if vague in ("多", "过"):
        return NamedTime(moment, moment, moment + timedelta(hours=1))  # "2 点多": within the hour after
    return NamedTime(moment, moment - VAGUE_HOUR, moment + VAGUE_HOUR)


def time_window(times: list[NamedTime]) -> str | None:
    """"START/END" covering every named time (a single exact time padded by ``WINDOW_PADDING``), or None."""
    if not times:
        return None
    start, end = min(t.start for t in times), max(t.end for t in times)
    if start == end:
        start, end = start - WINDOW_PADDING, end + WINDOW_PADDING
    return f"{start:%Y-%m-%d %H:%M}/{end:%Y-%m-%d %H:%M}"


def time_label(moment: datetime) -> str:
    """"YYYY-MM-DD HH:MM", with ":SS" when the seconds were named."""
    return f"{moment:%Y-%m-%d %H:%M}" + (f":{moment:%S}" if moment.second else "")
