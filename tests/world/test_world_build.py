"""The default world meets the size minimums, is deterministic, and tells each incident's story consistently."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from evigate.demo import (
    ERROR_CODES,
    INCIDENTS,
    INJECTION_TEXTS,
    SQL_LOOKING_TEXTS,
    WORLD_TABLES,
    build_world,
    knowledge_dir,
    world_fingerprint,
)


def scalar(cursor: duckdb.DuckDBPyConnection, sql: str, params: list | None = None):
    return cursor.execute(sql, params or []).fetchone()[0]


def test_default_world_meets_the_size_minimums(world_build, world) -> None:
    _, counts, _ = world_build
    assert counts["world_orders"] >= 10_000
    assert counts["world_logs"] >= 50_000
    assert counts["world_incidents"] >= 6
    assert counts == {table: scalar(world, f"SELECT count(*) FROM {table}") for table in WORLD_TABLES}
    per_service = world.execute(
        "SELECT service, count(DISTINCT metric), count(DISTINCT ts) FROM world_metrics GROUP BY service").fetchall()
    assert len(per_service) >= 8
    assert all(minutes == 1440 and metrics >= 4 for _, metrics, minutes in per_service)
    assert len(list(knowledge_dir().rglob("*.md"))) >= 30


def test_build_is_fast(world_build) -> None:
    assert world_build[2] < 60  # the brief's bound on 2 cores; measured ~1 s


def test_same_seed_same_world_other_seed_other_world(world) -> None:
    reference = world_fingerprint(world)
    with duckdb.connect() as connection, connection.cursor() as again:
        build_world(again)
        assert world_fingerprint(again) == reference
        build_world(again, seed=7)
        other = world_fingerprint(again)
    assert other["world_orders"] != reference["world_orders"]
    assert other["world_logs"] != reference["world_logs"]
    assert other["world_incidents"] == reference["world_incidents"]  # ground truth does not depend on the seed


def test_small_scale_keeps_every_incident_anchor() -> None:
    with duckdb.connect() as connection, connection.cursor() as cursor:
        counts = build_world(cursor, scale=0.05)
        anchors = {incident.anchor_order_id for incident in INCIDENTS if incident.anchor_order_id}
        found = {row[0] for row in cursor.execute(
            "SELECT order_id FROM world_orders WHERE order_id IN (SELECT unnest(?))", [sorted(anchors)]).fetchall()}
    assert found == anchors
    assert counts["world_orders"] < 1_000


def test_rejects_a_non_positive_scale() -> None:
    with duckdb.connect() as connection, connection.cursor() as cursor, pytest.raises(ValueError, match="scale"):
        build_world(cursor, scale=0)


def test_order_123_failed_in_the_gateway_timeout_incident(world) -> None:
    status, code, channel, trace = world.execute(
        "SELECT status, error_code, payment_channel, trace_id FROM world_orders WHERE order_id = 123").fetchone()
    assert (status, code, channel) == ("FAILED", "ERR_TIMEOUT", "unionpay")
    latency, timeout = world.execute(
        "SELECT latency_ms, timeout_ms FROM world_payments WHERE order_id = 123").fetchone()
    assert (latency, timeout) == (5300, 3000)
    messages = [row[0] for row in world.execute(
        "SELECT message FROM world_logs WHERE order_id = 123 AND error_code = 'ERR_TIMEOUT' ORDER BY ts").fetchall()]
    assert "upstream unionpay timeout after 5300ms (timeout=3000ms)" in messages
    incident = next(i for i in INCIDENTS if i.anchor_order_id == 123)
    assert incident.anchor_trace_id == trace and incident.error_code == "ERR_TIMEOUT"
    others = scalar(world, "SELECT count(*) FROM world_orders WHERE error_code = 'ERR_TIMEOUT' "
                           "AND updated_at BETWEEN ? AND ?", [incident.start, incident.end])
    assert others >= 10  # order 123 is one of many failures of that incident


def series(world, service: str, metric: str, start: str, end: str) -> list[float]:
    return [row[0] for row in world.execute(
        "SELECT value FROM world_metrics WHERE service = ? AND metric = ? AND ts >= ? AND ts < ? ORDER BY ts",
        [service, metric, f"2026-11-28 {start}", f"2026-11-28 {end}"]).fetchall()]


def test_gateway_timeout_breaches_latency_while_the_payment_pool_stays_healthy(world) -> None:
    assert min(series(world, "pay-gateway", "latency_p99", "14:00", "14:25")) > 2000
    assert max(series(world, "pay-gateway", "latency_p99", "13:00", "13:55")) < 2000
    assert max(series(world, "payment-service", "pool_pending", "13:50", "14:30")) == 0


def test_pool_exhaustion_shows_in_active_idle_pending_and_logs(world) -> None:
    assert set(series(world, "payment-service", "pool_active", "09:31", "09:50")) == {50}
    assert set(series(world, "payment-service", "pool_idle", "09:31", "09:50")) == {0}
    assert max(series(world, "payment-service", "pool_pending", "09:30", "09:52")) > 100
    assert max(series(world, "payment-service", "pool_pending", "10:00", "23:59")) == 0
    stats = [row[0] for row in world.execute(
        "SELECT message FROM world_logs WHERE service = 'payment-service' AND message LIKE '%Pool stats%' "
        "AND ts BETWEEN '2026-11-28 09:40' AND '2026-11-28 09:41'").fetchall()]
    assert stats and all(re.search(r"active=50, idle=0, waiting=\d{2,}", message) for message in stats)
    assert scalar(world, "SELECT count(*) FROM world_logs WHERE message LIKE 'Connection leak detection%'") > 5


def test_other_incidents_leave_their_signals(world) -> None:
    assert max(series(world, "mysql-order", "slow_query_count", "02:10", "02:45")) > 10
    assert max(series(world, "mysql-order", "deadlock_count", "11:00", "11:20")) > 0
    assert max(series(world, "mysql-order", "deadlock_count", "11:20", "23:59")) == 0
    assert min(series(world, "api-gateway", "http_429_count", "16:30", "16:50")) > 100
    assert min(series(world, "redis-cluster", "cache_hit_rate", "20:00", "20:03")) < 30
    assert min(series(world, "redis-cluster", "cache_hit_rate", "12:00", "19:59")) > 90
    for code in ("SLOW_SQL", "ERR_DEADLOCK", "ERR_RATE_LIMITED", "ERR_DB_POOL_EXHAUSTED", "ERR_SMS_PROVIDER"):
        assert scalar(world, "SELECT count(*) FROM world_logs WHERE error_code = ?", [code]) > 0, code


def test_logs_are_ordered_inside_the_world_day(world) -> None:
    first, last = world.execute("SELECT min(ts), max(ts) FROM world_logs").fetchone()
    assert first >= datetime(2026, 11, 28) and last < datetime(2026, 11, 29)
    unordered = scalar(world, "SELECT count(*) FROM (SELECT ts < lag(ts) OVER (ORDER BY log_id) AS back "
                              "FROM world_logs) WHERE back")
    assert unordered == 0


def test_every_logged_error_code_is_catalogued_and_documented(world) -> None:
    logged = {row[0] for row in world.execute(
        "SELECT DISTINCT error_code FROM world_logs WHERE error_code IS NOT NULL").fetchall()}
    assert logged <= set(ERROR_CODES)
    documented = "\n".join(path.read_text(encoding="utf-8") for path in Path(knowledge_dir()).rglob("*.md"))
    assert {code for code in logged if code not in documented} == set()


def test_adversarial_text_is_present_as_data(world) -> None:
    for text in (*INJECTION_TEXTS, *SQL_LOOKING_TEXTS):
        hits = scalar(world, "SELECT count(*) FROM world_logs WHERE strpos(message, ?) > 0", [text])
        remarks = scalar(world, "SELECT count(*) FROM world_orders WHERE strpos(coalesce(remark, ''), ?) > 0", [text])
        assert hits + remarks > 0, text
