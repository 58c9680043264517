"""Times and durations in connector tool arguments: ISO-8601 (naive = UTC), epoch seconds, `now`, `now-30m`.

Connector data carries real timestamps, so these helpers are UTC throughout (the demo world's UTC+8 local
clock in evigate.tools.timeparse does not apply here).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_RELATIVE = re.compile(r"^now\s*(?:(?P<sign>[-+])\s*(?P<amount>[0-9.a-z]+))?$")
TIME_HELP = "use ISO-8601 like '2026-03-01T10:15:00Z' (no zone means UTC), epoch seconds, 'now' or 'now-30m'"


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
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a time; {TIME_HELP}")
    if isinstance(value, int | float):
        return datetime.fromtimestamp(float(value), UTC)
    text = str(value).strip()
    relative = _RELATIVE.match(text.lower())
    if relative:
        moment = (now or (lambda: datetime.now(UTC)))()
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        if relative.group("amount"):
            offset = timedelta(seconds=parse_duration(relative.group("amount")))
            moment = moment - offset if relative.group("sign") == "-" else moment + offset
        return moment
    if re.fullmatch(r"\d{9,11}(?:\.\d+)?", text):
        return datetime.fromtimestamp(float(text), UTC)
    try:
        parsed = datetime.fromisoformat(text.replace(" ", "T", 1) if " " in text else text)
    except ValueError:
        raise ValueError(f"{text[:60]!r} is not a time; {TIME_HELP}") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def iso(moment: datetime) -> str:
    """'2026-03-01T10:15:00Z'."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
