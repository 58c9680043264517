"""Time arguments and the data clock."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evigate.demo import demo_toolbox
from evigate.rules.text.times import parse_moment, parse_window
from evigate.tools import DataSource, Toolbox


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


@pytest.mark.parametrize(
    "text", ["9999-12-31 23:30+00:00", "0001-01-01 00:10+12:00", "9999-12-31T23:59:59Z", "9999-12-31 20:00-06:00"]
)
def test_moments_beyond_the_calendar_are_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="out of range"):
        parse_moment(text)


@pytest.mark.parametrize(
    "args",
    [
        {"start": "9999-12-31 23:30+00:00"},
        {"time_window": "9999-12-31 23:00Z/9999-12-31 23:30+00:00"},
        {"start": "9999-12-31 23:59:59", "end": "00:01"},  # a clock time after the last day rolls past year 9999
    ],
)
def test_time_overflow_is_a_failed_invocation_not_an_exception(toolbox: Toolbox, args: dict) -> None:
    result = toolbox.call("query_logs", **args)
    assert not result.success and result.error
    [recorded] = toolbox.invocations()
    assert (recorded.id, recorded.success, recorded.input) == (result.invocation_id, False, args)


@given(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59)),
    st.integers(min_value=-12 * 60, max_value=14 * 60),
)
def test_any_zoned_moment_parses_or_is_a_value_error(moment: datetime, offset_minutes: int) -> None:
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    day = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"  # strftime drops %Y's zeros before year 1000
    text = f"{day} {moment.hour:02d}:{moment.minute:02d}{sign}{hours:02d}:{minutes:02d}"
    try:
        parsed = parse_moment(text)
    except ValueError as exc:
        assert "out of range" in str(exc)
    else:
        assert isinstance(parsed, datetime) and parsed.tzinfo is None
