"""Timestamps, windows and durations as tool arguments carry them. Pure, no I/O.

Two clocks: the tools of a frozen data set read naive local time (UTC+8, ``LOCAL_OFFSET``): ``parse_moment`` and
``parse_window`` take "YYYY-MM-DD HH:MM[:SS]", a bare "HH:MM" the tool anchors to its data's day, or "START/END".
Connector data carries real timestamps, so ``parse_time`` is UTC throughout: ISO-8601 (naive = UTC), epoch
seconds, ``now``, ``now-30m``. Both turn every failure, a moment past the calendar included, into a ValueError
that names the accepted forms.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from typing import Annotated, Any

from pydantic import BeforeValidator

LOCAL_OFFSET = timezone(timedelta(hours=8))
"""Data timestamps are naive local time (Asia/Shanghai); aware inputs are converted to it."""

_DATE_TIME = re.compile(
    r"^(?P<date>\d{4}[-/]\d{1,2}[-/]\d{1,2})(?:[ T]+(?P<time>\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?))?"
    r"\s*(?P<zone>Z|[+-]\d{2}:?\d{2})?$"
)
_CLOCK = re.compile(r"^(?P<time>\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)$")
_WINDOW_SEPARATORS = (" to ", "~", "～", "至", "到", "/", " - ", "—")
TIME_HELP = "use 'YYYY-MM-DD HH:MM[:SS]' or 'HH:MM' (local time of the data)"
UTC_TIME_HELP = "use ISO-8601 like '2026-03-01T10:15:00Z' (no zone means UTC), epoch seconds, 'now' or 'now-30m'"

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_RELATIVE = re.compile(r"^now\s*(?:(?P<sign>[-+])\s*(?P<amount>[0-9.a-z]+))?$")


def in_zone(moment: datetime, zone: tzinfo, naive: tzinfo) -> datetime:
    """``moment`` as an aware datetime in ``zone``, a naive one read as ``naive`` time.

    Raises OverflowError when the conversion leaves years 1-9999.
    """
    return (moment if moment.tzinfo else moment.replace(tzinfo=naive)).astimezone(zone)


def _clock(text: str) -> time:
    parts = text.split(":")
    seconds = float(parts[2]) if len(parts) > 2 else 0.0
    whole = int(seconds)
    return time(int(parts[0]), int(parts[1]), whole, round((seconds - whole) * 1_000_000))


def parse_moment(value: Any) -> datetime | time:
    """A datetime (naive local time) or, for a bare clock time, a `time` the tool anchors to its data's day.

    Raises ValueError with the accepted formats for anything else.
    """
    if isinstance(value, datetime):
        try:
            return in_zone(value, LOCAL_OFFSET, LOCAL_OFFSET).replace(tzinfo=None) if value.tzinfo else value
        except OverflowError:
            raise ValueError(_out_of_range(value.isoformat())) from None
    if isinstance(value, time):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if not isinstance(value, str):
        raise ValueError(f"expected a time string, got {type(value).__name__}; {TIME_HELP}")
    text = value.strip()
    try:
        clock = _CLOCK.match(text)
        if clock:
            return _clock(clock.group("time"))
        match = _DATE_TIME.match(text)
        if match:
            year, month, day = (int(part) for part in re.split(r"[-/]", match.group("date")))
            moment = datetime.combine(date(year, month, day), _clock(match.group("time") or "00:00"))
            zone = match.group("zone")
            if zone:
                moment = in_zone(moment.replace(tzinfo=UTC if zone == "Z" else _offset(zone)), LOCAL_OFFSET,
                                 LOCAL_OFFSET).replace(tzinfo=None)
            return moment
    except ValueError as exc:
        raise ValueError(f"invalid time {text!r}: {exc}; {TIME_HELP}") from None
    except OverflowError:  # converting "9999-12-31 23:30+00:00" to UTC+8 leaves the calendar
        raise ValueError(_out_of_range(text)) from None
    raise ValueError(f"unrecognised time {text!r}; {TIME_HELP}")


def _out_of_range(text: str) -> str:
    return f"time {text!r} is out of range: it falls outside years 1-9999 in UTC+8; {TIME_HELP}"


def _offset(zone: str) -> timezone:
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))


def parse_window(value: Any) -> tuple[datetime | time, datetime | time]:
    """A "START/END" window (also "START~END", "START to END", "START 至 END"); ValueError otherwise."""
    if not isinstance(value, str):
        raise ValueError(f"time_window must be a string like '2026-03-02 14:00/2026-03-02 14:30', got {value!r}")
    text = value.strip()
    for separator in _WINDOW_SEPARATORS:
        position = text.find(separator)
        while position != -1:  # "2026/11/28 14:00/…" has several slashes: try each split point
            left, right = text[:position].strip(), text[position + len(separator):].strip()
            try:
                return parse_moment(left), parse_moment(right)
            except ValueError:
                position = text.find(separator, position + 1)
    raise ValueError(f"unrecognised time_window {text!r}; use 'START/END' where each side is {TIME_HELP[4:]}")


def anchor(moment: datetime | time | None, day: date) -> datetime | None:
    """A full datetime: bare clock times are placed on `day`."""
    if moment is None or isinstance(moment, datetime):
        return moment
    return datetime.combine(day, moment)


def _optional_moment(value: Any) -> datetime | time | None:
    return None if value is None or value == "" else parse_moment(value)


Moment = Annotated[datetime | time | None, BeforeValidator(_optional_moment)]
"""Pydantic field type of a time argument."""


def _day(moment: date) -> str:
    """"2026-11-28"; years before 1000 keep four digits (strftime's %Y drops their zeros on glibc)."""
    return f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"


def format_minute(moment: datetime) -> str:
    """"2026-11-28 14:03"."""
    return f"{_day(moment)} {moment:%H:%M}"


def format_second(moment: datetime) -> str:
    """"2026-11-28 14:03:12"."""
    return f"{_day(moment)} {moment:%H:%M:%S}"


def parse_duration(text: str) -> float:
    """'90s', '5m', '1h30m', '250ms' → seconds. ValueError for anything else."""
    cleaned = text.strip().lower()
    if not cleaned:
        raise ValueError("empty duration; use e.g. '30s', '5m', '1h'")
    position, total = 0, 0.0
    for match in _DURATION.finditer(cleaned):
        if match.start() != position:
            break
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        position = match.end()
    if position != len(cleaned) or total <= 0:
        raise ValueError(f"{text!r} is not a duration; use e.g. '30s', '5m', '1h'")
    return total


def format_duration(seconds: float) -> str:
    """Seconds → the shortest Prometheus duration that says it ('300' → '5m')."""
    whole = round(seconds)
    if abs(seconds - whole) > 1e-9 or whole == 0:
        return f"{round(seconds * 1000)}ms"
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if whole % size == 0:
            return f"{whole // size}{unit}"
    return f"{whole}s"


def parse_time(value: str | float | int | datetime, *, now: Callable[[], datetime] | None = None) -> datetime:
    """A timezone-aware UTC datetime. ValueError naming the accepted forms otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a time; {UTC_TIME_HELP}")
    try:
        return _utc(value, now)
    except (OverflowError, OSError):  # "0001-01-01T00:00+05:00", now-1e9w, 1e20 epoch seconds leave the calendar
        raise ValueError(f"{str(value)[:60]!r} is out of range: it falls outside years 1-9999; {UTC_TIME_HELP}") \
            from None


def _utc(value: str | float | int | datetime, now: Callable[[], datetime] | None) -> datetime:
    if isinstance(value, datetime):
        return in_zone(value, UTC, UTC)
    if isinstance(value, int | float):
        return datetime.fromtimestamp(float(value), UTC)
    text = str(value).strip()
    relative = _RELATIVE.match(text.lower())
    if relative:
        moment = in_zone((now or (lambda: datetime.now(UTC)))(), UTC, UTC)
        if relative.group("amount"):
            offset = timedelta(seconds=parse_duration(relative.group("amount")))
            moment = moment - offset if relative.group("sign") == "-" else moment + offset
        return moment
    if re.fullmatch(r"\d{9,11}(?:\.\d+)?", text):
        return datetime.fromtimestamp(float(text), UTC)
    try:
        parsed = datetime.fromisoformat(text.replace(" ", "T", 1) if " " in text else text)
    except ValueError:
        raise ValueError(f"{text[:60]!r} is not a time; {UTC_TIME_HELP}") from None
    return in_zone(parsed, UTC, UTC)


def iso(moment: datetime) -> str:
    """'2026-03-01T10:15:00Z'."""
    utc = moment.astimezone(UTC)
    return f"{_day(utc)}T{utc:%H:%M:%S}Z"
