"""Log lines that tell each incident's story beyond the individual orders, plus day-long background noise.

The anchor trace of an incident ties its key lines together. Some lines carry prompt-injection and SQL-looking
text on purpose: they are data the pipeline must quote or ignore, never obey.
"""

from __future__ import annotations

import numpy as np

from evigate.demo.catalog import (
    GATEWAY_TIMEOUT_MS,
    INCIDENTS,
    INJECTION_ORDER_ID,
    INJECTION_TEXTS,
    INJECTION_TRACE_ID,
    SQL_LOOKING_TEXTS,
)
from evigate.demo.logs import LogSink
from evigate.demo.metrics import Series
from evigate.demo.orders import (
    CACHE_AVALANCHE,
    DEADLOCK,
    FLASH_SALE_SKU,
    GATEWAY_TIMEOUT,
    MS_PER_MINUTE,
    POOL_EXHAUSTION,
    RETRY_STORM,
    SLOW_SQL,
    SMS_OUTAGE,
    Order,
)

Window = tuple[int, int]


def at(hour: int, minute: int, second: int = 0, milli: int = 0) -> int:
    """Milliseconds since midnight of a wall-clock time."""
    return ((hour * 60 + minute) * 60 + second) * 1000 + milli


def _every(window: Window, step_ms: int, rng: np.random.Generator, jitter_ms: int = 4000) -> list[int]:
    start, end = window[0] * MS_PER_MINUTE, window[1] * MS_PER_MINUTE
    return [t + int(rng.integers(0, jitter_ms)) for t in range(start, end, step_ms)]


def _slow_sql(sink: LogSink, rng: np.random.Generator, trace: str | None) -> None:
    sink.add(at(2, 0, 0, 12), "settlement-service", "INFO",
             "reconciliation job started batch=2026-11-27 trigger=cron(0 0 2 * * ?)", trace=trace)
    for offset, t in enumerate(_every(SLOW_SQL, 35_000, rng)):
        elapsed = int(rng.integers(6_000, 12_400))
        examined = int(rng.integers(17_900_000, 18_400_000))
        sink.add(t, "settlement-service", "WARN",
                 f"slow query {elapsed}ms: SELECT id, order_id, amount, status FROM t_payment_record WHERE "
                 f"DATE(created_at) = '2026-11-27' AND status = 'SUCCESS' LIMIT 5000 OFFSET {offset * 5000}",
                 trace=trace, code="SLOW_SQL")
        sink.add(t + 3, "mysql-order", "WARN",
                 f"slow log: Query_time: {elapsed / 1000:.3f} Rows_examined: {examined} table=t_payment_record "
                 "key=NULL (full table scan)", trace=trace, code="SLOW_SQL")
        if offset % 4 == 0:
            sink.add(t + 900, "order-service", "WARN",
                     f"slow query {int(rng.integers(1_100, 1_900))}ms: SELECT * FROM t_order WHERE user_id = ? "
                     "ORDER BY created_at DESC LIMIT 20", code="SLOW_SQL")
    sink.add(at(2, 45, 12), "settlement-service", "INFO",
             "reconciliation job finished batch=2026-11-27 rows=1824311 elapsed=2712s", trace=trace)


def _sms_outage(sink: LogSink, rng: np.random.Generator, trace: str | None) -> None:
    sink.add(at(6, 14, 20), "notification-service", "WARN",
             "circuit breaker sms-vendor-a OPEN after 20 consecutive failures", trace=trace, code="ERR_SMS_PROVIDER")
    for t in _every(SMS_OUTAGE, 60_000, rng):
        sink.add(t, "notification-service", "WARN", f"sms retry queue size={int(rng.integers(40, 420))}",
                 code="ERR_SMS_PROVIDER")
    sink.add(at(6, 40, 5), "notification-service", "INFO", "sms-vendor-a recovered, circuit breaker CLOSED",
             trace=trace)


def _pool_exhaustion(sink: LogSink, rng: np.random.Generator, trace: str | None) -> None:
    sink.add(at(9, 25, 3), "payment-service", "INFO",
             "deployment started version=v2.14.0 by=release-bot change=CHG-8812", trace=trace)
    sink.add(at(9, 26, 10), "payment-service", "INFO", "Started PaymentApplication in 41.2 seconds (version v2.14.0)",
             trace=trace)
    for t in _every((9 * 60 + 27, POOL_EXHAUSTION[1] - 2), 45_000, rng):
        connection = f"com.mysql.cj.jdbc.ConnectionImpl@{int(rng.integers(1 << 20, 1 << 24)):x}"
        sink.add(t, "payment-service", "WARN",
                 f"Connection leak detection triggered for {connection} on thread "
                 f"refund-worker-{int(rng.integers(1, 9))}, stack trace follows", trace=trace)
    for t in _every(POOL_EXHAUSTION, 20_000, rng):
        sink.add(t, "payment-service", "ERROR",
                 "callback handler: HikariPool-1 - Connection is not available, request timed out after 30000ms.",
                 code="ERR_DB_POOL_EXHAUSTED")
    sink.add(at(9, 48, 30), "payment-service", "INFO", "rollback started to version=v2.13.2 by=oncall-zhang",
             trace=trace)
    sink.add(at(9, 50, 12), "payment-service", "INFO", "Started PaymentApplication in 39.8 seconds (version v2.13.2)",
             trace=trace)


def _deadlock(sink: LogSink, rng: np.random.Generator, trace: str | None) -> None:
    sink.add(at(11, 0, 0, 5), "inventory-service", "INFO", f"flash sale started sku={FLASH_SALE_SKU} stock=5000",
             trace=trace)
    for t in _every(DEADLOCK, 50_000, rng):
        sink.add(t, "mysql-order", "WARN",
                 f"LATEST DETECTED DEADLOCK: trx A holds X lock on t_stock (sku_id='{FLASH_SALE_SKU}') waiting for "
                 "t_stock_log; trx B holds t_stock_log waiting for t_stock; WE ROLL BACK TRANSACTION (2)",
                 code="ERR_DEADLOCK")
    sink.add(at(11, 20, 31), "inventory-service", "INFO", f"flash sale sold out sku={FLASH_SALE_SKU}", trace=trace)


def _gateway_timeout(sink: LogSink, rng: np.random.Generator, series: Series) -> None:
    p99 = series[("pay-gateway", "latency_p99")]
    for minute in range(*GATEWAY_TIMEOUT):
        sink.add(minute * MS_PER_MINUTE + 30_000 + int(rng.integers(0, 900)), "pay-gateway", "WARN",
                 f"channel unionpay p99 latency {int(p99[minute])}ms exceeds SLO 2000ms "
                 f"(timeout={GATEWAY_TIMEOUT_MS}ms)")
    sink.add(at(14, 12, 0, 220), "pay-gateway", "INFO",
             "received channel notice from unionpay: 部分发卡行交易处理延迟，正在处理中")
    sink.add(at(14, 25, 40), "pay-gateway", "INFO", "channel unionpay latency recovered p99=640ms")


def _retry_storm(sink: LogSink, rng: np.random.Generator, trace: str | None) -> None:
    for t in _every((RETRY_STORM[0] - 2, RETRY_STORM[1] - 2), 40_000, rng):
        sink.add(t, "risk-service", "WARN",
                 f"Full GC (Allocation Failure) pause {int(rng.integers(2_000, 2_700))}ms heap=7.8G/8.0G", trace=trace)
    for t in _every(RETRY_STORM, 10_000, rng, jitter_ms=800):
        sink.add(t, "api-gateway", "WARN",
                 f"HTTP 429 Too Many Requests: rate limit 2000 req/s exceeded route=/api/v1/orders "
                 f"rejected={int(rng.integers(60, 260))} in last 10s", code="ERR_RATE_LIMITED")
    sink.add(at(16, 48, 30), "risk-service", "INFO", "instance risk-service-2 restarted by oncall-li; rule cache "
             "limited to 200000 entries", trace=trace)


def _cache_avalanche(sink: LogSink, rng: np.random.Generator, series: Series, orders: list[Order]) -> None:
    sink.add(at(8, 0, 0, 40), "product-service", "INFO",
             "cache warm-up finished keys=48213 prefix=product:detail: ttl=43200s")
    sink.add(at(20, 0, 1, 2), "redis-cluster", "WARN", "expired 48213 keys in last 60s (prefix product:detail:)")
    hit_rate = series[("product-service", "cache_hit_rate")]
    for minute in range(*CACHE_AVALANCHE):
        sink.add(minute * MS_PER_MINUTE + 15_000, "product-service", "WARN",
                 f"cache hit rate {hit_rate[minute]:.1f}% below 80% for product:detail:*")
    for minute in range(CACHE_AVALANCHE[0], CACHE_AVALANCHE[0] + 6):
        sink.add(minute * MS_PER_MINUTE + 31_000, "mysql-order", "WARN",
                 f"connections {int(rng.integers(1_380, 1_490))}/1500 threads_running={int(rng.integers(150, 260))}")
    start, end = CACHE_AVALANCHE[0] * MS_PER_MINUTE, CACHE_AVALANCHE[1] * MS_PER_MINUTE
    for order in orders:
        if start <= order.created_ms < end and order.failure_stage != "product" and rng.random() < 0.6:
            sink.add(order.created_ms + 7, "product-service", "WARN",
                     f"cache miss key=product:detail:{order.sku_id} loaded from mysql-order in "
                     f"{int(rng.integers(900, 2_000))}ms", trace=order.trace_id, order=order.order_id)
    sink.add(at(20, 18, 20), "product-service", "INFO", "cache hit rate recovered 95.1% for product:detail:*")


def _adversarial(sink: LogSink) -> None:
    sink.add(at(13, 58, 41, 100), "api-gateway", "WARN",
             f"blocked request body contains '{INJECTION_TEXTS[0]}' uri=/api/v1/orders/{INJECTION_ORDER_ID}/remark",
             trace=INJECTION_TRACE_ID, order=INJECTION_ORDER_ID, code="WAF_BLOCKED")
    sink.add(at(13, 58, 43, 7), "coupon-service", "WARN", f'coupon code "{SQL_LOOKING_TEXTS[0]}" not found',
             trace=INJECTION_TRACE_ID, code="ERR_COUPON_INVALID")
    sink.add(at(13, 58, 44, 530), "api-gateway", "WARN",
             f"blocked query string id={SQL_LOOKING_TEXTS[1]} uri=/api/v1/orders", trace=INJECTION_TRACE_ID,
             code="WAF_BLOCKED")


def _background_noise(sink: LogSink, rng: np.random.Generator, orders: list[Order]) -> None:
    """Errors that happen every day: bad callbacks, duplicate pay clicks, failed logins."""
    paid = [order for order in orders if order.pay_ms is not None and order.status == "PAID"]
    for index in rng.choice(len(paid), size=min(len(paid), 12), replace=False):
        order = paid[int(index)]
        sink.add(order.finished_ms + 1_200, "pay-gateway", "WARN",
                 f"duplicate payment request blocked by idempotency key payment_id=PAY{order.order_id:08d}01",
                 trace=order.trace_id, order=order.order_id, code="ERR_DUPLICATE_PAYMENT")
    for t in np.sort(rng.integers(0, 24 * 60 * MS_PER_MINUTE, size=7)):
        sink.add(int(t), "pay-gateway", "WARN", "callback signature verification failed channel=wechat_pay",
                 code="ERR_SIGN_INVALID")
    for t in np.sort(rng.integers(0, 24 * 60 * MS_PER_MINUTE, size=60)):
        sink.add(int(t), "user-service", "WARN", f"login failed user={int(rng.integers(10_000, 99_999))} "
                 "reason=bad_password")


def incident_logs(sink: LogSink, rng: np.random.Generator, series: Series, orders: list[Order]) -> None:
    """Every incident's narrative lines, the adversarial lines and the background noise."""
    traces = {incident.incident_id: incident.anchor_trace_id for incident in INCIDENTS}
    _slow_sql(sink, rng, traces["INC-20261128-01"])
    _sms_outage(sink, rng, traces["INC-20261128-02"])
    _pool_exhaustion(sink, rng, None)
    _deadlock(sink, rng, None)
    _gateway_timeout(sink, rng, series)
    _retry_storm(sink, rng, None)
    _cache_avalanche(sink, rng, series, orders)
    _adversarial(sink)
    _background_noise(sink, rng, orders)
