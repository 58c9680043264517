"""`query_metrics`: a service's minute series with window statistics and the first threshold breach."""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any

import duckdb
import numpy as np
from pydantic import Field, field_validator

from evigate.demo.catalog import METRIC_UNITS
from evigate.demo.tools.logs import normalize_service
from evigate.demo.tools.windows import WindowArgs
from evigate.rules.text.times import format_minute
from evigate.signatures.tooling import WITHIN_THRESHOLD
from evigate.tools.base import Tool, ToolOutput
from evigate.tools.formatting import number, with_unit
from evigate.tools.source import DataSource

MAX_POINT_LINES = 48
METRIC_ALIASES = {
    "p99": "latency_p99", "latency": "latency_p99", "latency_p99_ms": "latency_p99", "rt": "latency_p99",
    "response_time": "latency_p99", "cpu": "cpu_usage", "memory": "memory_usage", "mem": "memory_usage",
    "errors": "error_rate", "error": "error_rate", "hit_rate": "cache_hit_rate", "cache_hit": "cache_hit_rate",
    "active": "pool_active", "idle": "pool_idle", "pending": "pool_pending", "hikaricp_active": "pool_active",
    "hikaricp_idle": "pool_idle", "hikaricp_pending": "pool_pending", "waiting": "pool_pending",
    "429": "http_429_count", "http_429": "http_429_count", "deadlocks": "deadlock_count",
    "slow_queries": "slow_query_count", "connections": "active_connections",
}


def normalize_metric(value: str) -> str:
    """"Latency P99" → latency_p99, "hikaricp.pending" → pool_pending; unknown names pass through, normalized."""
    key = re.sub(r"[\s.\-/]+", "_", value.strip().lower())
    return METRIC_ALIASES.get(key, key)


class QueryMetricsArgs(WindowArgs):
    service: str = Field(min_length=1, max_length=64, description="service id, e.g. pay-gateway")
    metric: str = Field(min_length=1, max_length=64,
                        description="e.g. latency_p99, error_rate, qps, cpu_usage, pool_active, pool_idle, "
                                    "pool_pending, cache_hit_rate")

    @field_validator("service")
    @classmethod
    def _service(cls, value: str) -> str:
        return normalize_service(value) or value

    @field_validator("metric")
    @classmethod
    def _metric(cls, value: str) -> str:
        return normalize_metric(value)


def _threshold(cursor: duckdb.DuckDBPyConnection, service: str, metric: str) -> tuple[float, str] | None:
    try:
        row = cursor.execute(
            "SELECT threshold, direction FROM world_metric_thresholds WHERE metric = ? AND service IN (?, '*') "
            "ORDER BY service = '*' LIMIT 1", [metric, service]).fetchone()
    except duckdb.CatalogException:  # a user's own data may have no threshold table
        return None
    return (float(row[0]), str(row[1])) if row else None


def _runs(times: list[datetime], values: np.ndarray, metric: str, unit: str | None) -> list[str]:
    """One line per point, except that three or more equal consecutive values share one line."""
    lines = []
    start = 0
    while start < len(values):
        stop = start
        while stop + 1 < len(values) and values[stop + 1] == values[start]:
            stop += 1
        value = with_unit(values[start], unit)
        if stop - start >= 2:
            lines.append(f"{format_minute(times[start])}..{times[stop]:%H:%M} {metric}={value} "
                         f"({stop - start + 1} points)")
        else:
            lines.extend(f"{format_minute(times[i])} {metric}={value}" for i in range(start, stop + 1))
        start = stop + 1
    return lines


def _point_lines(times: list[datetime], values: np.ndarray, metric: str, unit: str | None) -> tuple[str, list[str]]:
    """The points section: every point (runs folded) when short enough, else avg/max per time bucket."""
    runs = _runs(times, values, metric, unit)
    if len(runs) <= MAX_POINT_LINES:
        return "points:", runs
    size = math.ceil(len(times) / MAX_POINT_LINES)
    lines = []
    for offset in range(0, len(times), size):
        chunk = values[offset : offset + size]
        lines.append(f"{format_minute(times[offset])}..{times[min(offset + size, len(times)) - 1]:%H:%M} {metric} "
                     f"avg={with_unit(float(chunk.mean()), unit)} max={with_unit(float(chunk.max()), unit)}")
    return "points (bucketed avg/max):", lines


class QueryMetrics(Tool):
    """Minute points of one metric of one service, with min/max/avg/p95 and the first threshold breach."""

    name = "query_metrics"
    description = (
        "Query one metric of one service (minute resolution) in a time window (start/end or time_window; default: "
        "all data). Returns window statistics (min, max with time, avg, p95), the alert threshold and the first "
        "minute that breached it, then the points (bucketed when the window is long)."
    )
    Args = QueryMetricsArgs

    def run(self, args: QueryMetricsArgs, world: DataSource) -> ToolOutput:
        with world.cursor() as cursor:
            return self._answer(args, world, cursor)

    def _answer(self, args: QueryMetricsArgs, world: DataSource, cursor: duckdb.DuckDBPyConnection) -> ToolOutput:
        start, end = args.bounds(world)
        available = [row[0] for row in cursor.execute(
            "SELECT DISTINCT metric FROM world_metrics WHERE service = ? ORDER BY 1", [args.service]).fetchall()]
        if args.metric not in available:
            if available:
                reason = f"service {args.service} has no metric {args.metric}; its metrics: {', '.join(available)}"
            else:
                services = [row[0] for row in cursor.execute(
                    "SELECT DISTINCT service FROM world_metrics ORDER BY 1").fetchall()]
                reason = f"no metrics for service {args.service}; services with metrics: {', '.join(services)}"
            return ToolOutput(text=f"query_metrics {args.service} {args.metric}: no rows ({reason})",
                              retrieval_details={"service": args.service, "metric": args.metric, "points": 0,
                                                 "available_metrics": available})
        conditions, params = ["service = ?", "metric = ?"], [args.service, args.metric]
        for clause, bound in (("ts >= ?", start), ("ts <= ?", end)):
            if bound is not None:
                conditions.append(clause)
                params.append(bound)
        rows = cursor.execute(f"SELECT ts, value FROM world_metrics WHERE {' AND '.join(conditions)} ORDER BY ts",
                              params).fetchall()
        window = f"{format_minute(start) if start else 'begin'} → {format_minute(end) if end else 'end'}"
        details: dict[str, Any] = {"service": args.service, "metric": args.metric, "points": len(rows)}
        if not rows:
            return ToolOutput(
                text=f"query_metrics {args.service} {args.metric} {window}: no rows (no points in window)",
                retrieval_details=details,
            )
        times = [row[0] for row in rows]
        values = np.array([row[1] for row in rows], dtype=float)
        unit = METRIC_UNITS.get(args.metric)
        peak = int(np.argmax(values))
        stats = {"min": float(values.min()), "max": float(values.max()), "avg": round(float(values.mean()), 2),
                 "p95": round(float(np.percentile(values, 95)), 2), "max_at": format_minute(times[peak])}
        lines = [
            f"query_metrics {args.service} {args.metric} ({unit or 'value'}) {format_minute(times[0])} → "
            f"{format_minute(times[-1])}, {len(rows)} points (1/min)",
            f"stats: min={with_unit(stats['min'], unit)} max={with_unit(stats['max'], unit)} at {stats['max_at']} "
            f"avg={with_unit(stats['avg'], unit)} p95={with_unit(stats['p95'], unit)}",
        ]
        threshold = _threshold(cursor, args.service, args.metric)
        if threshold is not None:
            limit, direction = threshold
            breached = values > limit if direction == "above" else values < limit
            sign = ">" if direction == "above" else "<"
            details["threshold"] = {"value": limit, "direction": direction, "breach_minutes": int(breached.sum())}
            details[WITHIN_THRESHOLD] = not breached.any()
            if breached.any():
                first = int(np.argmax(breached))
                details["threshold"]["first_breach"] = format_minute(times[first])
                lines.append(f"threshold {sign} {with_unit(limit, unit)}: first breach {format_minute(times[first])} "
                             f"({args.metric}={with_unit(values[first], unit)}), {int(breached.sum())} of "
                             f"{len(rows)} minutes in breach")
            else:
                lines.append(f"threshold {sign} {with_unit(limit, unit)}: no breach in window")
        details["stats"] = stats
        title, points = _point_lines(times, values, args.metric, unit)
        lines.append(title)
        lines.extend(points)
        return ToolOutput(text="\n".join(lines), retrieval_details=details)


__all__ = ["QueryMetrics", "QueryMetricsArgs", "normalize_metric", "number"]
