"""The times a question names and the window the planner fills from them (zh hour phrases, clock times)."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evigate.domain.times import named_times, time_window

DAY = date(2026, 11, 28)


@pytest.mark.parametrize(
    ("query", "window"),
    [
        ("凌晨 2 点多 settlement-service 对账任务很慢", "2026-11-28 02:00/2026-11-28 03:00"),
        ("早上 6 点多短信发送失败", "2026-11-28 06:00/2026-11-28 07:00"),
        ("晚上 8 点订单 3141 报 ERR_UPSTREAM_TIMEOUT", "2026-11-28 19:30/2026-11-28 20:30"),
        ("下午3点半支付失败", "2026-11-28 15:15/2026-11-28 15:45"),
        ("2点10分开始报错", "2026-11-28 01:55/2026-11-28 02:25"),
        ("中午 1 点左右", "2026-11-28 12:30/2026-11-28 13:30"),
        ("around 02:10", "2026-11-28 01:55/2026-11-28 02:25"),
        ("from 14:05 to 14:20", "2026-11-28 14:05/2026-11-28 14:20"),
        ("2026-11-27 23:50 起", "2026-11-27 23:35/2026-11-28 00:05"),
    ],
)
def test_named_times_give_the_window(query: str, window: str) -> None:
    assert time_window(named_times(query, DAY)) == window


@pytest.mark.parametrize("query", ["请给出 3 点建议", "晚上 12 点", "25:00", "2026-13-45 10:00", "持续 2 小时"])
def test_what_is_no_clock_time_is_skipped_not_guessed(query: str) -> None:
    assert named_times(query, DAY) == []


@given(st.text(alphabet=st.sampled_from(list("0123456789:：点时分半多 凌晨下午晚上左右-年月日T")), max_size=40))
def test_any_text_gives_ordered_spans_on_real_dates(text: str) -> None:
    times = named_times(text, DAY)
    for named in times:
        assert isinstance(named.moment, datetime) and named.start <= named.moment <= named.end
    window = time_window(times)
    assert (window is None) == (not times)
    if window:
        start, end = window.split("/")
        assert start < end
