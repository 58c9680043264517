"""Every time the program parses, in one place: tool arguments and the times a question names. Pure, no I/O.

- ``stamps``: timestamps, windows and durations as tools take them: ``parse_moment`` / ``parse_window`` in the
  data's naive local time (UTC+8), ``parse_time`` / ``parse_duration`` in UTC for connectors, and their formats.
- ``phrases``: the times a question names ("凌晨 2 点多", "下午四点半以后", "this morning", "昨天下午") as spans, and
  the "START/END" window covering them (``named_times``, ``time_window``), which ``parse_window`` reads back.

Import from here: ``from evigate.rules.text.times import parse_window, named_times``.
"""

from __future__ import annotations

from evigate.rules.text.times.phrases import (
    AFTER,
    DAY_PARTS,
    VAGUE_HOUR,
    WINDOW_PADDING,
    NamedTime,
    alternative_window,
    named_times,
    time_label,
    time_window,
)
from evigate.rules.text.times.stamps import (
    LOCAL_OFFSET,
    TIME_HELP,
    UTC_TIME_HELP,
    Moment,
    anchor,
    format_duration,
    format_minute,
    format_second,
    in_zone,
    iso,
    parse_duration,
    parse_moment,
    parse_time,
    parse_window,
)

__all__ = [
    "AFTER", "DAY_PARTS", "LOCAL_OFFSET", "TIME_HELP", "UTC_TIME_HELP", "VAGUE_HOUR", "WINDOW_PADDING", "Moment",
    "NamedTime", "alternative_window", "anchor", "format_duration", "format_minute", "format_second", "in_zone", "iso",
    "named_times",
    "parse_duration", "parse_moment", "parse_time", "parse_window", "time_label", "time_window",
]
