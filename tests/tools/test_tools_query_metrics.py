"""`query_metrics`: statistics agree with the data, breaches are found, long windows are bucketed."""

from __future__ import annotations

import pytest

from evigate.tools import Toolbox


def test_statistics_match_the_table(toolbox: Toolbox, store) -> None:
    result = toolbox.call("query_metrics", service="pay-gateway", metric="latency_p99",
                          time_window="2026-11-28 13:50/2026-11-28 14:30")
    assert result.success
    with store.cursor() as cursor:
        low, high, mean, points = cursor.execute(
            "SELECT min(value), max(value), avg(value), count(*) FROM world_metrics WHERE service = 'pay-gateway' "
            "AND metric = 'latency_p99' AND ts BETWEEN '2026-11-28 13:50' AND '2026-11-28 14:30'").fetchone()
    stats = result.retrieval_details["stats"]
    assert (stats["min"], stats["max"], result.retrieval_details["points"]) == (low, high, points)
    assert stats["avg"] == pytest.approx(mean, abs=0.01)
    assert low <= stats["p95"] <= high
    assert result.retrieval_details["threshold"]["first_breach"] == "2026-11-28 14:00"
    assert "threshold > 2000ms: first breach 2026-11-28 14:00" in result.output
    assert result.retrieval_details["within_threshold"] is False


def test_healthy_pool_during_the_gateway_incident_is_quotable(toolbox: Toolbox) -> None:
    result = toolbox.call("query_metrics", service="payment-service", metric="hikaricp.pending",
                          start="13:50", end="14:30")
    assert "threshold > 5: no breach in window" in result.output
    assert result.retrieval_details["within_threshold"] is True  # a healthy reading, for the claim rules
    assert "2026-11-28 13:50..14:30 pool_pending=0 (41 points)" in result.output


def test_pool_exhaustion_breach(toolbox: Toolbox) -> None:
    result = toolbox.call("query_metrics", service="payment-service", metric="pool_active",
                          time_window="09:00~10:00")
    assert result.retrieval_details["stats"]["max"] == 50
    assert result.retrieval_details["threshold"]["first_breach"] <= "2026-11-28 09:30"


def test_cache_hit_rate_breaches_below(toolbox: Toolbox) -> None:
    result = toolbox.call("query_metrics", service="redis-cluster", metric="Cache Hit Rate",
                          start="2026-11-28 19:50", end="2026-11-28 20:30")
    assert result.retrieval_details["threshold"]["direction"] == "below"
    assert result.retrieval_details["threshold"]["first_breach"] == "2026-11-28 20:00"


def test_whole_day_is_bucketed(toolbox: Toolbox) -> None:
    result = toolbox.call("query_metrics", service="pay-gateway", metric="p99")
    assert result.retrieval_details["points"] == 1440
    assert "points (bucketed avg/max):" in result.output
    assert "2026-11-28 14:00..14:29 latency_p99 avg=" in result.output
    assert len(result.output.splitlines()) <= 60


def test_unknown_metric_lists_the_available_ones(toolbox: Toolbox) -> None:
    result = toolbox.call("query_metrics", service="pay-gateway", metric="pool_active")
    assert result.success and "no rows" in result.output and "latency_p99" in result.output
    assert result.retrieval_details["available_metrics"]


def test_window_without_points(toolbox: Toolbox) -> None:
    result = toolbox.call("query_metrics", service="pay-gateway", metric="qps",
                          start="2027-01-01 00:00", end="2027-01-01 01:00")
    assert result.success and "no rows (no points in window)" in result.output
