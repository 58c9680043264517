"""Log lines: each order's journey through the services, periodic housekeeping lines, and incident narratives.

Lines are collected column-wise (times in milliseconds since midnight) so the builder inserts them in bulk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evigate.demo.catalog import GATEWAY_TIMEOUT_MS, INJECTION_ORDER_ID, INJECTION_TEXTS, MINUTES, POOL_MAX
from evigate.demo.metrics import Series
from evigate.demo.orders import MS_PER_MINUTE, Order, payment_id

LAST_MS = MINUTES * MS_PER_MINUTE - 1
"""Late follow-ups (refunds, cancellations) are clamped to the world day's last millisecond."""
POOL_NAMES = {"order-service": "HikariPool-1", "payment-service": "HikariPool-1", "inventory-service": "HikariPool-1",
              "user-service": "HikariPool-1", "settlement-service": "HikariPool-2"}


@dataclass
class LogSink:
    """Column buffers of the world_logs table."""

    ts_ms: list[int] = field(default_factory=list)
    service: list[str] = field(default_factory=list)
    level: list[str] = field(default_factory=list)
    trace_id: list[str | None] = field(default_factory=list)
    order_id: list[int | None] = field(default_factory=list)
    error_code: list[str | None] = field(default_factory=list)
    message: list[str] = field(default_factory=list)

    def add(
        self, ts_ms: int, service: str, level: str, message: str, *, trace: str | None = None,
        order: int | None = None, code: str | None = None,
    ) -> None:
        self.ts_ms.append(int(ts_ms))
        self.service.append(service)
        self.level.append(level)
        self.trace_id.append(trace)
        self.order_id.append(order)
        self.error_code.append(code)
        self.message.append(message)

    def __len__(self) -> int:
        return len(self.ts_ms)


def _order_creation(sink: LogSink, order: Order, rng: np.random.Generator) -> int:
    """Log the create call up to the failure stage; return the time the create request finished."""
    t, trace, oid = order.created_ms, order.trace_id, order.order_id
    add = sink.add
    add(t + 4, "order-service", "INFO",
        f"order created amount={order.amount:.2f} CNY sku={order.sku_id} qty={order.quantity} user={order.user_id}",
        trace=trace, order=oid)
    if order.remark:
        add(t + 5, "order-service", "INFO", f"order remark saved: {order.remark}", trace=trace, order=oid)
    t += 10
    if order.failure_stage == "product":
        add(t + 2000, "order-service", "ERROR",
            f"call product-service GET /products/{order.sku_id} timeout after 2000ms", trace=trace, order=oid,
            code="ERR_UPSTREAM_TIMEOUT")
        return t + 2010
    if order.coupon_code:
        if order.failure_stage == "coupon":
            add(t + 12, "coupon-service", "WARN", f"coupon {order.coupon_code} rejected: expired", trace=trace,
                order=oid, code="ERR_COUPON_INVALID")
            return t + 20
        add(t + 12, "coupon-service", "INFO", f"coupon {order.coupon_code} applied", trace=trace, order=oid)
    t += 30
    if order.failure_stage == "inventory":
        if order.error_code == "ERR_DEADLOCK":
            add(t + 480, "inventory-service", "ERROR",
                f"Deadlock found when trying to get lock; try restarting transaction (MySQL 1213) sku={order.sku_id}",
                trace=trace, order=oid, code="ERR_DEADLOCK")
            add(t + 495, "order-service", "ERROR", "reserve stock failed: inventory-service returned ERR_DEADLOCK",
                trace=trace, order=oid, code="ERR_DEADLOCK")
            return t + 500
        add(t + 15, "inventory-service", "WARN", f"stock insufficient sku={order.sku_id} requested={order.quantity}",
            trace=trace, order=oid, code="ERR_STOCK_INSUFFICIENT")
        return t + 20
    add(t + 18, "inventory-service", "INFO",
        f"stock reserved sku={order.sku_id} qty={order.quantity} remaining={int(rng.integers(5, 4000))}",
        trace=trace, order=oid)
    t += 40
    if order.error_code == "ERR_RISK_TIMEOUT":
        for attempt in (1, 2, 3):
            add(t + attempt * 810, "order-service", "WARN",
                f"call risk-service POST /risk/check timeout after 800ms, retry {attempt}/3 (no backoff)",
                trace=trace, order=oid)
        add(t + 3250, "order-service", "ERROR", "risk check failed after 3 retries", trace=trace, order=oid,
            code="ERR_RISK_TIMEOUT")
        return t + 3260
    if order.error_code == "ERR_RISK_REJECTED":
        add(t + 60, "risk-service", "WARN",
            f"risk check rejected user={order.user_id} score={int(rng.integers(81, 99))}", trace=trace, order=oid,
            code="ERR_RISK_REJECTED")
        return t + 70
    add(t + 55, "risk-service", "INFO", f"risk check passed score={int(rng.integers(1, 40))}", trace=trace, order=oid)
    return t + 70


def _order_payment(sink: LogSink, order: Order, rng: np.random.Generator) -> None:
    assert order.pay_ms is not None
    t, trace, oid, channel = order.pay_ms, order.trace_id, order.order_id, order.channel
    add = sink.add
    add(t, "payment-service", "INFO", f"payment requested channel={channel} amount={order.amount:.2f}",
        trace=trace, order=oid)
    if order.failure_stage == "payment-db":
        add(t + 30_000, "payment-service", "ERROR",
            "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
            trace=trace, order=oid, code="ERR_DB_POOL_EXHAUSTED")
        add(t + 30_020, "order-service", "WARN", "order status PENDING_PAYMENT -> FAILED reason=ERR_DB_POOL_EXHAUSTED",
            trace=trace, order=oid, code="ERR_DB_POOL_EXHAUSTED")
        add(t + 30_030, "api-gateway", "INFO", f"POST /api/v1/orders/{oid}/pay status=500 latency=30041ms",
            trace=trace, order=oid)
        return
    latency = order.gateway_latency_ms or 0
    done = t + latency + 20
    code = order.error_code
    if code == "ERR_TIMEOUT":
        add(done - 10, "pay-gateway", "ERROR",
            f"upstream {channel} timeout after {latency}ms (timeout={GATEWAY_TIMEOUT_MS}ms)",
            trace=trace, order=oid, code=code)
        if oid == INJECTION_ORDER_ID:  # the upstream echoes attacker-controlled text: data, not an instruction
            add(done - 8, "pay-gateway", "WARN", f'upstream body: {{"respMsg":"{INJECTION_TEXTS[0]}"}}', trace=trace,
                order=oid)
        add(done, "payment-service", "ERROR",
            f"payment failed channel={channel} error=ERR_TIMEOUT elapsed={latency + 42}ms", trace=trace, order=oid,
            code=code)
    elif code in ("ERR_INSUFFICIENT_BALANCE", "ERR_CARD_DECLINED", "ERR_CHANNEL_UNAVAILABLE"):
        level = "ERROR" if code == "ERR_CHANNEL_UNAVAILABLE" else "WARN"
        add(done - 10, "pay-gateway", level, f"upstream {channel} responded {code} in {latency}ms", trace=trace,
            order=oid, code=code)
        add(done, "payment-service", "WARN", f"payment failed channel={channel} error={code}", trace=trace, order=oid,
            code=code)
    else:
        add(done - 10, "pay-gateway", "INFO",
            f"upstream {channel} responded SUCCESS in {latency}ms (timeout={GATEWAY_TIMEOUT_MS}ms)", trace=trace,
            order=oid)
        add(done, "payment-service", "INFO", f"payment succeeded channel={channel} payment_id={payment_id(oid)}",
            trace=trace, order=oid)
        add(done + 8, "order-service", "INFO", "order status PENDING_PAYMENT -> PAID", trace=trace, order=oid)
        if order.status == "REFUNDED":
            refund_at = min(done + int(rng.integers(600_000, 3_600_000)), LAST_MS)
            add(refund_at, "payment-service", "INFO", f"refund completed channel={channel} amount={order.amount:.2f}",
                trace=trace, order=oid)
        return
    add(done + 8, "order-service", "WARN", f"order status PENDING_PAYMENT -> FAILED reason={code}",
        trace=trace, order=oid, code=code)
    status = 504 if code == "ERR_TIMEOUT" else 402
    add(done + 15, "api-gateway", "INFO", f"POST /api/v1/orders/{oid}/pay status={status} latency={latency + 61}ms",
        trace=trace, order=oid)


def order_logs(sink: LogSink, orders: list[Order], rng: np.random.Generator, sms_outage: tuple[int, int]) -> None:
    """Narrate every order from the API call to the notification."""
    for order in orders:
        create_done = _order_creation(sink, order, rng)
        create_status = 200 if order.failure_stage not in ("product", "inventory", "risk", "coupon") else 500
        sink.add(create_done + 3, "api-gateway", "INFO",
                 f"POST /api/v1/orders status={create_status} latency={create_done + 3 - order.created_ms}ms",
                 trace=order.trace_id, order=order.order_id)
        if order.status == "CANCELLED":
            sink.add(min(order.created_ms + int(rng.integers(60_000, 900_000)), LAST_MS), "order-service", "INFO",
                     "order status PENDING_PAYMENT -> CANCELLED reason=user_cancel", trace=order.trace_id,
                     order=order.order_id)
        if order.pay_ms is None:
            continue
        _order_payment(sink, order, rng)
        if order.status in ("PAID", "REFUNDED"):
            notify_at = order.finished_ms + 150
            if sms_outage[0] * MS_PER_MINUTE <= notify_at < sms_outage[1] * MS_PER_MINUTE:
                sink.add(notify_at, "notification-service", "ERROR",
                         "sms-vendor-a returned 503 Service Unavailable template=ORDER_PAID", trace=order.trace_id,
                         order=order.order_id, code="ERR_SMS_PROVIDER")
            else:
                sink.add(notify_at, "notification-service", "INFO", "sms sent template=ORDER_PAID vendor=sms-vendor-a",
                         trace=order.trace_id, order=order.order_id)


def housekeeping_logs(sink: LogSink, series: Series, rng: np.random.Generator) -> None:
    """Per-minute HikariCP pool stats (agreeing with the metrics), GC lines and health checks."""
    minutes = len(next(iter(series.values())))
    for service, size in POOL_MAX.items():
        active = series[(service, "pool_active")]
        idle = series[(service, "pool_idle")]
        pending = series[(service, "pool_pending")]
        pool = POOL_NAMES[service]
        offset = int(rng.integers(0, 59_000))
        for minute in range(minutes):
            sink.add(minute * MS_PER_MINUTE + offset, service, "DEBUG",
                     f"{pool} - Pool stats (total={size}, active={int(active[minute])}, idle={int(idle[minute])}, "
                     f"waiting={int(pending[minute])})")
    for service in ("order-service", "payment-service", "product-service", "risk-service", "user-service"):
        for minute in range(0, minutes, 3):
            pause = int(rng.gamma(2.0, 9.0)) + 3
            sink.add(minute * MS_PER_MINUTE + int(rng.integers(0, 180_000)), service, "DEBUG",
                     f"GC pause (G1 Evacuation Pause) {pause}ms")
    for minute in range(0, minutes, 5):
        for service in ("api-gateway", "pay-gateway", "notification-service", "coupon-service"):
            sink.add(minute * MS_PER_MINUTE + int(rng.integers(0, 60_000)), service, "DEBUG",
                     "GET /actuator/health status=200 UP")
