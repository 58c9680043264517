"""Parsing of the time arguments tools accept: moments and "START/END" windows. Pure, no I/O."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta, timezone
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
        if not value.tzinfo:
            return value
        try:
            return value.astimezone(LOCAL_OFFSET).replace(tzinfo=None)
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
                offset = UTC if zone == "Z" else _offset(zone)
                moment = moment.replace(tzinfo=offset).astimezone(LOCAL_OFFSET).replace(tzinfo=None)
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


def format_minute(moment: datetime) -> str:
    """"2026-11-28 14:03"."""
    return moment.strftime("%Y-%m-%d %H:%M")


def format_second(moment: datetime) -> str:
    """"2026-11-28 14:03:12"."""
    return moment.strftime("%Y-%m-%d %H:%M:%S")
