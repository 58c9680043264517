"""`query_logs`: filtered log lines, oldest first, one quotable line each, with counts of what matched."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import duckdb
from pydantic import Field, field_validator

from evigate.demo.catalog import SERVICE_ALIASES
from evigate.demo.tools.windows import WindowArgs
from evigate.rules.text.times import format_second
from evigate.tools.base import Tool, ToolOutput
from evigate.tools.formatting import one_line
from evigate.tools.source import DataSource

LEVELS = ("DEBUG", "INFO", "WARN", "ERROR")
LEVEL_ALIASES = {"WARNING": "WARN", "ERR": "ERROR", "FATAL": "ERROR", "CRITICAL": "ERROR", "TRACE": "DEBUG"}


def normalize_service(value: str | None) -> str | None:
    """Lower-case service id; Chinese or informal names go through the world's alias table."""
    if value is None or not value.strip():
        return None
    lowered = value.strip().lower()
    return SERVICE_ALIASES.get(lowered, lowered)


def parse_order_id(value: Any) -> Any:
    """Accept 123, "123", "#123", "order 123"; leave anything else for pydantic to reject clearly."""
    if isinstance(value, str):
        digits = value.strip().lstrip("#").removeprefix("order").removeprefix("订单").strip().lstrip("#")
        if digits.isdigit():
            return int(digits)
    return value


class QueryLogsArgs(WindowArgs):
    service: str | None = Field(default=None, max_length=64, description="service id, e.g. pay-gateway")
    order_id: int | None = Field(default=None, ge=0, description="order id, e.g. 123")
    trace_id: str | None = Field(default=None, max_length=64, description="trace id (16 hex chars)")
    error_code: str | None = Field(default=None, max_length=64, description="error code, e.g. ERR_TIMEOUT")
    level: Literal["DEBUG", "INFO", "WARN", "ERROR"] | None = Field(
        default=None, description="minimum level; DEBUG lines are left out unless level=DEBUG or a keyword is given"
    )
    keyword: str | None = Field(default=None, max_length=200, description="case-insensitive substring of the message")
    limit: int = Field(default=50, ge=1, le=200, description="maximum lines returned")

    @field_validator("service", mode="before")
    @classmethod
    def _service(cls, value: Any) -> Any:
        return normalize_service(value) if isinstance(value, str) else value

    @field_validator("order_id", mode="before")
    @classmethod
    def _order(cls, value: Any) -> Any:
        return parse_order_id(value)

    @field_validator("trace_id")
    @classmethod
    def _trace(cls, value: str | None) -> str | None:
        return value.lower() if value else None

    @field_validator("error_code")
    @classmethod
    def _code(cls, value: str | None) -> str | None:
        return value.upper() if value else None

    @field_validator("level", mode="before")
    @classmethod
    def _level(cls, value: Any) -> Any:
        if isinstance(value, str):
            upper = value.strip().upper()
            return LEVEL_ALIASES.get(upper, upper) or None
        return value

    @field_validator("keyword")
    @classmethod
    def _keyword(cls, value: str | None) -> str | None:
        return value or None


def _where(args: QueryLogsArgs, start: datetime | None, end: datetime | None) -> tuple[str, list[Any]]:
    conditions: list[str] = []
    params: list[Any] = []
    for column, value in (("service", args.service), ("order_id", args.order_id), ("trace_id", args.trace_id),
                          ("error_code", args.error_code)):
        if value is not None:
            conditions.append(f"{column} = ?")
            params.append(value)
    if args.level is not None:
        conditions.append(f"level IN ({', '.join('?' for _ in LEVELS[LEVELS.index(args.level):])})")
        params.extend(LEVELS[LEVELS.index(args.level):])
    elif args.keyword is None:
        conditions.append("level <> 'DEBUG'")
    if args.keyword is not None:
        conditions.append("strpos(lower(message), lower(?)) > 0")
        params.append(args.keyword)
    if start is not None:
        conditions.append("ts >= ?")
        params.append(start)
    if end is not None:
        conditions.append("ts <= ?")
        params.append(end)
    return (" WHERE " + " AND ".join(conditions)) if conditions else "", params


def format_log_line(ts: datetime, level: str, service: str, trace: str | None, order: int | None, code: str | None,
                    message: str) -> str:
    """`2026-11-28 14:03:12 ERROR pay-gateway trace=… order=123 ERR_TIMEOUT upstream … after 5300ms`."""
    parts = [format_second(ts), level, service]
    if trace:
        parts.append(f"trace={trace}")
    if order is not None:
        parts.append(f"order={order}")
    if code:
        parts.append(code)
    parts.append(one_line(message))
    return " ".join(parts)


class QueryLogs(Tool):
    """Log lines matching every given filter."""

    name = "query_logs"
    description = (
        "Query service logs by service, order_id, trace_id, error_code, minimum level, message keyword and time "
        "window (start/end or time_window). Returns matching lines oldest first (ts level service trace order "
        "error_code message) plus counts by error code and service."
    )
    Args = QueryLogsArgs

    def run(self, args: QueryLogsArgs, world: DataSource) -> ToolOutput:
        with world.cursor() as cursor:
            return self._answer(args, world, cursor)

    def _answer(self, args: QueryLogsArgs, world: DataSource, cursor: duckdb.DuckDBPyConnection) -> ToolOutput:
        start, end = args.bounds(world)
        where, params = _where(args, start, end)
        summary = cursor.execute(f"SELECT count(*), min(ts), max(ts) FROM world_logs{where}", params).fetchone()
        total, first, last = summary if summary else (0, None, None)
        filters = {key: (format_second(value) if isinstance(value, datetime) else value)
                   for key, value in args.model_dump(exclude={"time_window", "limit"}).items() if value is not None}
        filters.update({key: format_second(value) for key, value in (("start", start), ("end", end)) if value})
        described = " ".join(f"{key}={value}" for key, value in filters.items()) or "(no filter)"
        if total == 0:
            return ToolOutput(text=f"query_logs {described}: no rows (0 matching log lines)",
                              retrieval_details={"matched": 0, "returned": 0, "filters": filters})
        rows = cursor.execute(
            f"SELECT ts, level, service, trace_id, order_id, error_code, message FROM world_logs{where} "
            "ORDER BY ts, log_id LIMIT ?", [*params, args.limit],
        ).fetchall()
        by_code = dict(cursor.execute(
            f"SELECT coalesce(error_code, '-'), count(*) FROM world_logs{where} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 6",
            params).fetchall())
        by_service = dict(cursor.execute(
            f"SELECT service, count(*) FROM world_logs{where} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 6", params,
        ).fetchall())
        header = [f"query_logs {described}: {total} matching lines between {format_second(first)} and "
                  f"{format_second(last)}, showing {len(rows)} oldest first"]
        if total > len(rows):
            header.append("by error_code: " + ", ".join(f"{code}={count}" for code, count in by_code.items()))
            header.append("by service: " + ", ".join(f"{service}={count}" for service, count in by_service.items()))
        lines = [format_log_line(*row) for row in rows]
        details = {"matched": total, "returned": len(rows), "filters": filters, "first_ts": format_second(first),
                   "last_ts": format_second(last), "by_error_code": by_code, "by_service": by_service}
        return ToolOutput(text="\n".join(header + lines), retrieval_details=details)
