"""`extract_query_entities`: what an incident question names, found by regular expressions only."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evigate.demo import SERVICES, extract_query_entities
from evigate.rules.text.times import parse_window


@pytest.mark.parametrize(
    ("query", "key", "expected"),
    [
        ("订单 123 支付失败，ERR_TIMEOUT 是什么原因？", "order_ids", [123]),
        ("订单 123 支付失败，ERR_TIMEOUT 是什么原因？", "error_codes", ["ERR_TIMEOUT"]),
        ("ERR_TIMEOUT是什么意思", "error_codes", ["ERR_TIMEOUT"]),  # no word boundary before CJK text
        ("订单号：456 和 order_id=789 都失败了", "order_ids", [456, 789]),
        ("order #2024 failed with err_risk_timeout", "error_codes", ["ERR_RISK_TIMEOUT"]),
        ("夜里 SLOW_SQL 很多", "error_codes", ["SLOW_SQL"]),
        ("支付网关和 payment-service 都报错", "services", ["pay-gateway", "payment-service"]),
        ("网关返回 429", "services", ["api-gateway"]),
        ("trace 3F9A7C2E5B8D1046 的日志", "trace_ids", ["3f9a7c2e5b8d1046"]),
        ("HTTP 429 太多", "http_statuses", [429]),
        ("连接池 pending 很高", "metrics", ["pool_pending"]),
        ("redis 命中率掉了", "metrics", ["cache_hit_rate"]),
        ("14:03 左右", "times", ["2026-11-28 14:03"]),
        ("14:03 左右", "time_window", "2026-11-28 13:48/2026-11-28 14:18"),
        ("2026-11-28 16:35 到 16:50", "time_window", "2026-11-28 16:35/2026-11-28 16:50"),
        ("14点03分 超时", "times", ["2026-11-28 14:03"]),
        ("没有任何实体的问题", "time_window", None),
        ("金额 5300 元，版本 2.14", "order_ids", []),
    ],
)
def test_examples(query: str, key: str, expected) -> None:
    assert extract_query_entities(query)[key] == expected


@given(st.text(max_size=300))
def test_never_raises_and_only_reports_what_the_text_holds(query: str) -> None:
    found = extract_query_entities(query)
    assert set(found) == {"order_ids", "error_codes", "services", "trace_ids", "http_statuses", "metrics", "times",
                          "time_window"}
    assert all(str(order) in query for order in found["order_ids"])
    assert all(code in query.upper() for code in found["error_codes"])
    assert set(found["services"]) <= set(SERVICES)
    assert all(trace in query.lower() for trace in found["trace_ids"])
    if found["time_window"] is not None:
        start, end = parse_window(found["time_window"])
        assert start <= end


@given(st.integers(min_value=1, max_value=10**9), st.sampled_from(["订单", "订单号", "order ", "order_id="]))
def test_order_ids_round_trip(order_id: int, prefix: str) -> None:
    assert extract_query_entities(f"请查{prefix}{order_id}的状态")["order_ids"] == [order_id]
