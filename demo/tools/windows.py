"""Shared time-window arguments of the log and metric tools."""

from __future__ import annotations

from datetime import datetime, time, timedelta

from pydantic import Field, field_validator, model_validator

from evigate.errors import ToolError
from evigate.rules.text.times import Moment, anchor, parse_window
from evigate.tools.base import ToolArgs
from evigate.tools.source import DataSource


class WindowArgs(ToolArgs):
    """`start`/`end` or a `time_window` "START/END"; explicit start/end win over the window's sides."""

    start: Moment = Field(default=None, description="window start, 'YYYY-MM-DD HH:MM[:SS]' or 'HH:MM' (UTC+8)")
    end: Moment = Field(default=None, description="window end (inclusive), same formats as start")
    time_window: str | None = Field(
        default=None, max_length=80, description="alternative to start/end: 'START/END', e.g. '2026-11-28 14:00/14:30'"
    )

    @field_validator("time_window")
    @classmethod
    def _check_window(cls, value: str | None) -> str | None:
        if value:
            parse_window(value)
        return value or None

    @model_validator(mode="after")
    def _apply_window(self) -> WindowArgs:
        if self.time_window:
            start, end = parse_window(self.time_window)
            if self.start is None:
                self.start = start
            if self.end is None:
                self.end = end
        start, end = self.start, self.end
        if isinstance(start, datetime) and isinstance(end, datetime) and end < start:
            raise ValueError(f"end ({end}) is before start ({start})")
        return self

    def bounds(self, world: DataSource) -> tuple[datetime | None, datetime | None]:
        """Start and end as full datetimes. Bare clock times sit on the start's day (else the data's day);
        an end clock time earlier than the start rolls over to the next day ("23:50/00:10")."""
        start, end = self.start, self.end
        if isinstance(start, time) or isinstance(end, time):
            day = start.date() if isinstance(start, datetime) else world.today()
            start, end = anchor(start, day), anchor(end, day)
            if start is not None and end is not None and end < start and isinstance(self.end, time):
                end += timedelta(days=1)
        if start is not None and end is not None and end < start:
            raise ToolError(f"end ({end}) is before start ({start})")
        return start, end
