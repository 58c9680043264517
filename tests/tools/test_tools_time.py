"""Time arguments and the data clock."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evigate.demo import demo_toolbox
from evigate.tools import DataSource, Toolbox
from evigate.tools.timeparse import parse_moment, parse_window


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-28 14:03", datetime(2026, 11, 28, 14, 3)),
        ("2026-11-28T14:03:12", datetime(2026, 11, 28, 14, 3, 12)),
        ("2026/11/28 14:03:12.500", datetime(2026, 11, 28, 14, 3, 12, 500_000)),
        ("2026-11-28", datetime(2026, 11, 28)),
        ("2026-11-28T06:03:00Z", datetime(2026, 11, 28, 14, 3)),
        ("2026-11-28 14:03+08:00", datetime(2026, 11, 28, 14, 3)),
        ("14:03", time(14, 3)),
    ],
)
def test_moments(text: str, expected) -> None:
    assert parse_moment(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01 10:00", "25:00", "", "14:03 pm"])
def test_bad_moments(text: str) -> None:
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        parse_moment(text)


@pytest.mark.parametrize(
    "text", ["2026-11-28 14:00/2026-11-28 14:30", "2026/11/28 14:00/2026/11/28 14:30", "14:00~14:30",
             "2026-11-28 14:00 to 14:30", "14:00 至 14:30"],
)
def test_windows(text: str) -> None:
    start, end = parse_window(text)
    assert (start.hour, start.minute, end.hour, end.minute) == (14, 0, 14, 30)


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31)))
def test_formatted_moments_round_trip(moment: datetime) -> None:
    moment = moment.replace(microsecond=0)
    assert parse_moment(moment.strftime("%Y-%m-%d %H:%M:%S")) == moment
    aware = moment.replace(tzinfo=UTC)
    assert parse_moment(aware) == moment + timedelta(hours=8)


def test_world_clock_and_injected_clock(toolbox: Toolbox, store, session_id) -> None:
    assert toolbox.call("get_current_datetime").output == "current datetime: 2026-11-28 23:59:59 (UTC+8)"
    fixed = demo_toolbox(store, session_id, source=DataSource(store, clock=lambda: datetime(2026, 11, 28, 14, 10)))
    assert "2026-11-28 14:10:00" in fixed.call("get_current_datetime").output
    # bare clock times anchor on the clock's day; an end before the start rolls over midnight
    late = fixed.call("query_logs", start="23:58", end="00:01", limit=1)
    assert late.success and late.retrieval_details["filters"]["end"] == "2026-11-29 00:01:00"
