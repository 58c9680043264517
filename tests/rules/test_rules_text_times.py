"""Properties of the one time parser (evigate.rules.text.times): tool arguments and the times a question names."""

from __future__ import annotations

import contextlib
from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.rules.text.times import (
    format_duration,
    format_second,
    iso,
    named_times,
    parse_duration,
    parse_moment,
    parse_time,
    parse_window,
    time_label,
    time_window,
)

DAY = date(2026, 11, 28)
MIDNIGHT = datetime(2026, 11, 28)
_PHRASES = ["凌晨", "下午", "晚上", "中午", "早上", "两点", "四点半", "8 点", "2 点多", "3点左右", "以后", "02:10",
            "14:05:09", "4:30 pm", "12 am", "this morning", "late afternoon", "tonight", "midday", "十一点二十分",
            "到", " ", "，", "settlement-service", "ERR_TIMEOUT", "为什么"]
_DAY_WORDS = ["昨天", "前天", "上周五", "last Monday", "yesterday", "2026-11-20", "2026年11月3日", "2026-02-30"]
_MOMENTS = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_any_text_names_ordered_spans_and_a_window_from_start_to_end(text: str) -> None:
    times = named_times(text, DAY)
    assert all(named.start <= named.moment <= named.end for named in times)
    window = time_window(times)
    assert (window is None) == (not times)
    if window:
        start, end = parse_window(window)
        assert isinstance(start, datetime) and isinstance(end, datetime) and start < end


@given(st.lists(st.sampled_from(_PHRASES), max_size=8))
def test_relative_times_fall_on_the_reference_day(parts: list[str]) -> None:
    for named in named_times("".join(parts), DAY):
        assert named.moment.date() == DAY
        if named.span_only:  # a part of the day ("凌晨", "tonight") lies within the day, midnight to midnight
            assert MIDNIGHT <= named.start < named.end <= MIDNIGHT + timedelta(days=1)


@given(st.lists(st.sampled_from(_PHRASES), max_size=8), st.sampled_from(_DAY_WORDS), st.integers(0, 8))
def test_a_named_day_moves_every_time_to_one_day(parts: list[str], day_word: str, at: int) -> None:
    # One day named (two, e.g. "2026-11-20 02:10 … 昨天", name two days, and each dated time keeps its own).
    parts.insert(min(at, len(parts)), day_word)
    assert len({named.moment.date() for named in named_times(" ".join(parts), DAY)}) <= 1


@settings(max_examples=300)
@given(st.one_of(st.text(max_size=60), st.from_regex(r"\s*(now\s*[-+]\s*[0-9.]+[a-z]{1,2}|\d{4}-\d\d-\d\dT\d\d:\d\d"
                                                     r"(:\d\d)?([+-]\d\d:\d\d|Z)?|\d{9,11})\s*", fullmatch=True)))
def test_parsers_fail_only_with_value_error(text: str) -> None:
    for parse in (parse_moment, parse_window, parse_time, parse_duration):
        with contextlib.suppress(ValueError):
            parse(text)


@given(_MOMENTS)
def test_iso_timestamps_round_trip(moment: datetime) -> None:
    aware = moment.replace(microsecond=0, tzinfo=UTC)
    assert parse_time(iso(aware)) == aware
    assert parse_time(aware.isoformat()) == aware
    naive = moment.replace(microsecond=0)
    assert parse_moment(format_second(naive)) == naive
    assert parse_moment(time_label(naive)) == naive.replace(second=naive.second)


@given(st.integers(min_value=1, max_value=10**7), st.sampled_from([1, 60, 3600]))
def test_durations_round_trip(amount: int, unit: int) -> None:
    assert parse_duration(format_duration(amount * unit)) == amount * unit


@pytest.mark.parametrize("text", ["0001-01-01T00:00+05:00", "9999-12-31T23:00-05:00", "now-99999999999w",
                                  "now+9999999999d"])
def test_times_past_the_calendar_are_a_value_error(text: str) -> None:
    """Found by the properties above: these raised OverflowError, which the connector tools did not catch."""
    with pytest.raises(ValueError, match="out of range"):
        parse_time(text, now=lambda: datetime(2026, 3, 1, tzinfo=UTC))


def test_years_before_1000_keep_four_digits() -> None:
    """strftime's %Y wrote year 999 as "999", which neither parse_time nor parse_moment reads back."""
    moment = datetime(999, 1, 2, 3, 4, 5)
    assert (iso(moment.replace(tzinfo=UTC)), format_second(moment)) == ("0999-01-02T03:04:05Z", "0999-01-02 03:04:05")
