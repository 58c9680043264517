"""`query_logs`: filters, quotable lines, counts, and harmless hostile argument values."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evigate.demo import INJECTION_TEXTS, SQL_LOOKING_TEXTS
from evigate.store import AuditStore
from evigate.tools import Toolbox

LINE = re.compile(r"^2026-11-28 \d\d:\d\d:\d\d (DEBUG|INFO|WARN|ERROR) [a-z-]+ ")


def orders_count(store: AuditStore) -> int:
    with store.cursor() as cursor:
        return cursor.execute("SELECT count(*) FROM world_orders").fetchone()[0]


def lines_of(output: str) -> list[str]:
    return [line for line in output.splitlines() if LINE.match(line)]


def test_order_123_journey_is_quotable(toolbox: Toolbox) -> None:
    result = toolbox.call("query_logs", order_id=123)
    assert result.success
    assert ("2026-11-28 14:03:12 ERROR pay-gateway trace=3f9a7c2e5b8d1046 order=123 ERR_TIMEOUT "
            "upstream unionpay timeout after 5300ms (timeout=3000ms)") in result.output.splitlines()
    assert result.retrieval_details["matched"] == len(lines_of(result.output)) == 9
    assert all("order=123" in line for line in lines_of(result.output))


def test_filters_combine(toolbox: Toolbox) -> None:
    result = toolbox.call("query_logs", service="pay-gateway", error_code="err_timeout",
                          time_window="2026-11-28 14:00/14:30", limit=200)
    lines = lines_of(result.output)
    assert lines and all(" pay-gateway " in line and "ERR_TIMEOUT" in line for line in lines)
    assert all("14:00:00" <= line[11:19] <= "14:30:00" for line in lines)
    assert result.retrieval_details["filters"]["error_code"] == "ERR_TIMEOUT"


def test_service_aliases_and_trace(toolbox: Toolbox) -> None:
    by_alias = toolbox.call("query_logs", service="支付网关", order_id="123")
    assert by_alias.success and all(" pay-gateway " in line for line in lines_of(by_alias.output))
    by_trace = toolbox.call("query_logs", trace_id="3F9A7C2E5B8D1046")
    assert by_trace.retrieval_details["matched"] == 9


def test_level_is_a_minimum_and_debug_needs_asking(toolbox: Toolbox) -> None:
    warn = toolbox.call("query_logs", service="payment-service", level="warning", limit=200)
    assert {line.split()[2] for line in lines_of(warn.output)} <= {"WARN", "ERROR"}
    assert set(warn.retrieval_details["by_service"]) == {"payment-service"}
    default = toolbox.call("query_logs", service="payment-service", start="09:40", end="09:41")
    assert all(" DEBUG " not in line for line in lines_of(default.output))
    stats = toolbox.call("query_logs", service="payment-service", keyword="pool stats", start="09:40", end="09:41")
    assert any("active=50, idle=0" in line for line in lines_of(stats.output))


def test_limit_and_counts(toolbox: Toolbox) -> None:
    result = toolbox.call("query_logs", error_code="ERR_DB_POOL_EXHAUSTED", limit=5)
    assert len(lines_of(result.output)) == 5
    matched = result.retrieval_details["matched"]
    assert matched > 5 and f"{matched} matching lines" in result.output
    assert f"ERR_DB_POOL_EXHAUSTED={matched}" in result.output


def test_injection_text_comes_back_as_data(toolbox: Toolbox) -> None:
    result = toolbox.call("query_logs", keyword=INJECTION_TEXTS[0])
    assert result.success and result.retrieval_details["matched"] >= 2
    assert all(INJECTION_TEXTS[0] in line for line in lines_of(result.output))


def test_sql_looking_values_are_harmless(toolbox: Toolbox, store) -> None:
    before = orders_count(store)
    literal = toolbox.call("query_logs", keyword=SQL_LOOKING_TEXTS[0])
    assert literal.success and literal.retrieval_details["matched"] == 1
    for hostile in ("x' OR '1'='1", "'; DROP TABLE world_orders; --", "%", "_", "\\", "ERR_%"):
        for field in ("service", "trace_id", "error_code", "keyword"):
            result = toolbox.call("query_logs", **{field: hostile})
            assert result.success, (field, hostile, result.error)
    assert toolbox.call("query_logs", keyword="%").retrieval_details["matched"] > 0  # literal %, not a wildcard
    assert toolbox.call("query_logs", error_code="ERR_%").retrieval_details["matched"] == 0
    assert orders_count(store) == before


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keyword=st.text(min_size=1, max_size=60))
def test_any_keyword_is_a_recorded_success(toolbox: Toolbox, keyword: str) -> None:
    result = toolbox.call("query_logs", keyword=keyword, limit=3)
    if keyword.strip():
        assert result.success, result.error
        assert len(lines_of(result.output)) <= 3
    assert toolbox.invocations()[-1].id == result.invocation_id
