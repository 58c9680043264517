"""Write the demo world into DuckDB: `build_world` (always rebuilds) and `ensure_world` (builds when needed).

Rows are generated in Python/numpy, staged as Arrow tables and inserted with one `INSERT … SELECT` per table,
inside one transaction, so a half-built world is never visible and `world_meta` is the commit marker.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

import duckdb
import numpy as np
import pyarrow as pa

from evigate.demo.catalog import (
    DEFAULT_SEED,
    DEFAULT_THRESHOLDS,
    GENERATOR_VERSION,
    INCIDENTS,
    WORLD_DAY,
    WORLD_NOW,
)
from evigate.demo.incident_logs import incident_logs
from evigate.demo.logs import LogSink, housekeeping_logs, order_logs
from evigate.demo.metrics import Series, generate_metrics
from evigate.demo.orders import GATEWAY_TIMEOUT_MS, SMS_OUTAGE, Order, generate_orders, payment_id
from evigate.errors import StoreError

WORLD_TABLES: tuple[str, ...] = (
    "world_meta", "world_orders", "world_payments", "world_logs", "world_metrics", "world_metric_thresholds",
    "world_incidents",
)

SCHEMA: tuple[str, ...] = (
    "CREATE TABLE world_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)",
    """CREATE TABLE world_orders (order_id BIGINT PRIMARY KEY, user_id BIGINT, created_at TIMESTAMP,
        updated_at TIMESTAMP, paid_at TIMESTAMP, status VARCHAR, amount DECIMAL(12, 2), currency VARCHAR,
        payment_channel VARCHAR, error_code VARCHAR, trace_id VARCHAR, sku_id VARCHAR, quantity INTEGER,
        coupon_code VARCHAR, remark VARCHAR)""",
    """CREATE TABLE world_payments (payment_id VARCHAR, order_id BIGINT, attempt INTEGER, channel VARCHAR,
        requested_at TIMESTAMP, finished_at TIMESTAMP, latency_ms INTEGER, status VARCHAR, error_code VARCHAR,
        timeout_ms INTEGER)""",
    """CREATE TABLE world_logs (log_id BIGINT, ts TIMESTAMP, service VARCHAR, level VARCHAR, trace_id VARCHAR,
        order_id BIGINT, error_code VARCHAR, message VARCHAR)""",
    "CREATE TABLE world_metrics (ts TIMESTAMP, service VARCHAR, metric VARCHAR, value DOUBLE)",
    """CREATE TABLE world_metric_thresholds (service VARCHAR, metric VARCHAR, threshold DOUBLE, direction VARCHAR,
        unit VARCHAR)""",
    """CREATE TABLE world_incidents (incident_id VARCHAR, title VARCHAR, service VARCHAR, start_ts TIMESTAMP,
        end_ts TIMESTAMP, error_code VARCHAR, root_cause VARCHAR, anchor_order_id BIGINT, anchor_trace_id VARCHAR,
        related_services VARCHAR[])""",
)

_EPOCH = np.datetime64(WORLD_DAY.isoformat(), "ms")
_ensure_lock = threading.Lock()


class CursorProvider(Protocol):
    """Anything that hands out a DuckDB cursor: an `AuditStore` or a `duckdb` connection."""

    def cursor(self) -> duckdb.DuckDBPyConnection: ...


def _timestamps(ms_values: list[int | None] | np.ndarray) -> pa.Array:
    values = np.array([np.iinfo(np.int64).min if value is None else value for value in ms_values], dtype=np.int64)
    mask = values == np.iinfo(np.int64).min
    stamps = _EPOCH + np.where(mask, 0, values).astype("timedelta64[ms]")
    return pa.array(stamps, type=pa.timestamp("ms"), mask=mask)


def _insert(cursor: duckdb.DuckDBPyConnection, table: str, columns: dict[str, Any]) -> int:
    staged = pa.table(columns)
    cursor.register("_world_staging", staged)
    try:
        cursor.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM _world_staging")  # names are ours
    finally:
        cursor.unregister("_world_staging")
    return staged.num_rows


def _order_columns(orders: list[Order]) -> dict[str, Any]:
    return {
        "order_id": pa.array([o.order_id for o in orders], pa.int64()),
        "user_id": pa.array([o.user_id for o in orders], pa.int64()),
        "created_at": _timestamps([o.created_ms for o in orders]),
        "updated_at": _timestamps([o.finished_ms for o in orders]),
        "paid_at": _timestamps([o.finished_ms if o.status in ("PAID", "REFUNDED") else None for o in orders]),
        "status": [o.status for o in orders],
        "amount": pa.array([round(o.amount, 2) for o in orders], pa.float64()),
        "currency": ["CNY"] * len(orders),
        "payment_channel": [o.channel for o in orders],
        "error_code": [o.error_code for o in orders],
        "trace_id": [o.trace_id for o in orders],
        "sku_id": [o.sku_id for o in orders],
        "quantity": pa.array([o.quantity for o in orders], pa.int32()),
        "coupon_code": [o.coupon_code for o in orders],
        "remark": [o.remark for o in orders],
    }


def _payment_columns(orders: list[Order]) -> dict[str, Any]:
    paid = [o for o in orders if o.pay_ms is not None]
    return {
        "payment_id": [payment_id(o.order_id) for o in paid],
        "order_id": pa.array([o.order_id for o in paid], pa.int64()),
        "attempt": pa.array([1] * len(paid), pa.int32()),
        "channel": [o.channel for o in paid],
        "requested_at": _timestamps([o.pay_ms for o in paid]),
        "finished_at": _timestamps([o.finished_ms for o in paid]),
        "latency_ms": pa.array([o.gateway_latency_ms for o in paid], pa.int32()),
        "status": ["FAILED" if o.error_code else "SUCCESS" for o in paid],
        "error_code": [o.error_code for o in paid],
        "timeout_ms": pa.array([GATEWAY_TIMEOUT_MS] * len(paid), pa.int32()),
    }


def _log_columns(sink: LogSink) -> dict[str, Any]:
    order = np.argsort(np.array(sink.ts_ms, dtype=np.int64), kind="stable").tolist()

    def pick(column: list[Any]) -> list[Any]:
        return [column[i] for i in order]

    return {
        "log_id": pa.array(np.arange(1, len(order) + 1), pa.int64()),
        "ts": _timestamps(pick(sink.ts_ms)),
        "service": pick(sink.service),
        "level": pick(sink.level),
        "trace_id": pick(sink.trace_id),
        "order_id": pa.array(pick(sink.order_id), pa.int64()),
        "error_code": pick(sink.error_code),
        "message": pick(sink.message),
    }


def _metric_columns(series: Series) -> dict[str, Any]:
    keys = sorted(series)
    minutes = len(series[keys[0]])
    minute_ms = np.arange(minutes, dtype=np.int64) * 60_000
    return {
        "ts": _timestamps(np.tile(minute_ms, len(keys))),
        "service": [service for service, _ in keys for _ in range(minutes)],
        "metric": [metric for _, metric in keys for _ in range(minutes)],
        "value": pa.array(np.concatenate([series[key] for key in keys]), pa.float64()),
    }


def _static_rows(cursor: duckdb.DuckDBPyConnection, seed: int, scale: float) -> dict[str, int]:
    cursor.executemany(
        "INSERT INTO world_metric_thresholds VALUES (?, ?, ?, ?, ?)",
        [(t.service, t.metric, float(t.threshold), t.direction, t.unit) for t in DEFAULT_THRESHOLDS],
    )
    cursor.executemany(
        "INSERT INTO world_incidents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(i.incident_id, i.title, i.service, i.start, i.end, i.error_code, i.root_cause, i.anchor_order_id,
          i.anchor_trace_id, list(i.related_services)) for i in INCIDENTS],
    )
    meta = {"generator_version": GENERATOR_VERSION, "seed": str(seed), "scale": repr(float(scale)),
            "world_day": WORLD_DAY.date().isoformat(), "timezone": "Asia/Shanghai", "now": WORLD_NOW.isoformat(" ")}
    cursor.executemany("INSERT INTO world_meta VALUES (?, ?)", sorted(meta.items()))
    return {"world_metric_thresholds": len(DEFAULT_THRESHOLDS), "world_incidents": len(INCIDENTS),
            "world_meta": len(meta)}


def build_world(cursor: duckdb.DuckDBPyConnection, *, seed: int = DEFAULT_SEED, scale: float = 1.0) -> dict[str, int]:
    """(Re)build every `world_*` table from `seed`; returns row counts per table.

    `scale` shrinks the order volume for fast tests (the incidents and anchor orders are always present);
    the default `1.0` world has ≥ 10k orders and ≥ 50k log lines. Same seed and scale → identical tables.
    """
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    rng = np.random.default_rng(seed)
    orders = generate_orders(rng, scale)
    series = generate_metrics(rng, orders)
    sink = LogSink()
    order_logs(sink, orders, rng, SMS_OUTAGE)
    housekeeping_logs(sink, series, rng)
    incident_logs(sink, rng, series, orders)
    owned = owned_world_tables(cursor)  # before the transaction: a failed probe would abort it
    cursor.execute("BEGIN TRANSACTION")
    try:
        for table in owned:
            cursor.execute(f"DROP TABLE {table}")  # only tables evigate's marker says evigate made
        for statement in SCHEMA:
            cursor.execute(statement)
        counts = {
            "world_orders": _insert(cursor, "world_orders", _order_columns(orders)),
            "world_payments": _insert(cursor, "world_payments", _payment_columns(orders)),
            "world_logs": _insert(cursor, "world_logs", _log_columns(sink)),
            "world_metrics": _insert(cursor, "world_metrics", _metric_columns(series)),
        }
        counts.update(_static_rows(cursor, seed, scale))
        cursor.execute("COMMIT")
    except BaseException:
        cursor.execute("ROLLBACK")
        raise
    return counts


def _present_tables(cursor: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in cursor.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()").fetchall()}


def owned_world_tables(cursor: duckdb.DuckDBPyConnection) -> list[str]:
    """The `world_*` tables present that evigate made, safe to replace; StoreError if any present one is foreign.

    evigate's marker is a `world_meta` table holding a `generator_version` row, written in the same transaction as
    the tables: without it, a table named like one of the world's belongs to someone else and is never dropped.
    """
    present = [table for table in WORLD_TABLES if table in _present_tables(cursor)]
    if present and "generator_version" not in world_info(cursor):
        raise StoreError(
            f"this database already holds table(s) {', '.join(present)} not made by evigate (no evigate marker in "
            "world_meta); the demo world will not replace them. Point `database` at another file, or rename or drop "
            "those tables yourself"
        )
    return present


def world_info(cursor: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The `world_meta` key/values, or {} when no world is built."""
    try:
        rows = cursor.execute("SELECT key, value FROM world_meta").fetchall()
    except duckdb.Error:  # no world_meta, or a table of that name shaped otherwise (someone else's)
        return {}
    return dict(rows)


def world_stats(cursor: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Row count of every world table that exists."""
    present = _present_tables(cursor)
    return {table: cursor.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # type: ignore[index]
            for table in WORLD_TABLES if table in present}


def world_fingerprint(cursor: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """md5 of every world table's content (rows rendered as text, in sorted order): equal worlds, equal prints."""
    return {
        table: cursor.execute(
            "SELECT md5(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY CAST(t AS VARCHAR)), '')) "
            f"FROM {table} t"
        ).fetchone()[0]  # type: ignore[index]
        for table in WORLD_TABLES
    }


def ensure_world(store: CursorProvider, *, seed: int = DEFAULT_SEED, scale: float = 1.0) -> dict[str, int]:
    """Build the world unless one built by this generator version is already there; returns row counts.

    Raises StoreError when the world must be built but the database cannot be written (e.g. opened read-only).
    """
    with _ensure_lock, store.cursor() as cursor:
        if world_info(cursor).get("generator_version") == GENERATOR_VERSION:
            return world_stats(cursor)
        owned_world_tables(cursor)  # refuse before generating rows, not after
        try:
            return build_world(cursor, seed=seed, scale=scale)
        except duckdb.Error as exc:
            raise StoreError(f"cannot build the demo world in this database ({exc}); run `evigate world init`") from exc
