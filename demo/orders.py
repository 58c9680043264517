"""Order and payment-attempt generation: normal traffic plus the incidents' failed orders.

Times are integer milliseconds since the world day's midnight so the bulk conversion to TIMESTAMP happens once,
in numpy. Every random draw comes from the one seeded generator, in a fixed order, so a seed fixes the world.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evigate.demo.catalog import (
    CHANNEL_SHARE,
    GATEWAY_TIMEOUT_MS,
    INCIDENTS,
    INJECTION_ORDER_ID,
    INJECTION_TEXTS,
    MINUTES,
    PAYMENT_CHANNELS,
)

MS_PER_MINUTE = 60_000
FLASH_SALE_SKU = "SKU-10086"
BASE_ORDER_COUNT = 12_000


@dataclass
class Order:
    """One order and the outcome the log generator narrates."""

    order_id: int
    created_ms: int
    user_id: int
    sku_id: str
    quantity: int
    amount: float
    channel: str
    trace_id: str
    coupon_code: str | None = None
    status: str = "PAID"
    error_code: str | None = None
    failure_stage: str | None = None
    pay_ms: int | None = None
    gateway_latency_ms: int | None = None
    finished_ms: int = 0
    remark: str | None = None


def payment_id(order_id: int, attempt: int = 1) -> str:
    """The payment-attempt id the payment-service logs and world_payments stores."""
    return f"PAY{order_id:08d}{attempt:02d}"


def minute_of(hour: int, minute: int) -> int:
    """Minute index of a wall-clock time on the world day."""
    return hour * 60 + minute


def _window_minutes(incident_index: int) -> tuple[int, int]:
    incident = INCIDENTS[incident_index]
    return (minute_of(incident.start.hour, incident.start.minute), minute_of(incident.end.hour, incident.end.minute))


SLOW_SQL, SMS_OUTAGE, POOL_EXHAUSTION, DEADLOCK, GATEWAY_TIMEOUT, RETRY_STORM, CACHE_AVALANCHE = (
    _window_minutes(index) for index in range(len(INCIDENTS))
)


def traffic_profile() -> np.ndarray:
    """Relative order rate per minute: quiet nights, a late-morning and an evening peak, the flash sale."""
    hours = np.arange(MINUTES) / 60.0
    rate = (
        0.15
        + 1.0 * np.exp(-((hours - 11.0) ** 2) / 6.0)
        + 0.8 * np.exp(-((hours - 14.5) ** 2) / 4.0)
        + 1.3 * np.exp(-((hours - 20.5) ** 2) / 3.0)
    )
    rate[DEADLOCK[0] : DEADLOCK[1]] *= 2.5  # the flash sale draws a crowd
    return rate / rate.sum()


def _in(window: tuple[int, int], created_ms: int) -> bool:
    return window[0] * MS_PER_MINUTE <= created_ms < window[1] * MS_PER_MINUTE


def _trace_ids(rng: np.random.Generator, count: int) -> list[str]:
    return [f"{value:016x}" for value in rng.integers(1 << 60, 1 << 63, size=count, dtype=np.int64)]


def _decide_outcome(order: Order, rng: np.random.Generator) -> None:
    """Pick status, error code and the stage where an order failed, from its time window and chance."""
    roll = float(rng.random())
    created = order.created_ms
    if order.sku_id == FLASH_SALE_SKU and _in(DEADLOCK, created) and roll < 0.3:
        order.status, order.error_code, order.failure_stage = "FAILED", "ERR_DEADLOCK", "inventory"
    elif _in(CACHE_AVALANCHE, created) and roll < 0.1:
        order.status, order.error_code, order.failure_stage = "FAILED", "ERR_UPSTREAM_TIMEOUT", "product"
    elif _in(RETRY_STORM, created) and roll < 0.3:
        order.status, order.error_code, order.failure_stage = "FAILED", "ERR_RISK_TIMEOUT", "risk"
    elif roll < 0.004:
        order.status, order.error_code, order.failure_stage = "FAILED", "ERR_STOCK_INSUFFICIENT", "inventory"
    elif roll < 0.009:
        order.status, order.error_code, order.failure_stage = "FAILED", "ERR_RISK_REJECTED", "risk"
    elif order.coupon_code and roll < 0.02:
        order.status, order.error_code, order.failure_stage = "FAILED", "ERR_COUPON_INVALID", "coupon"
    elif roll < 0.05:
        order.status = "CANCELLED"
    if order.status != "PAID":
        order.finished_ms = created + 300 + int(rng.integers(0, 400))
        return
    # the customer pays a few seconds to a minute and a half after creating the order
    order.pay_ms = created + int(rng.integers(4_000, 90_000))
    _decide_payment(order, rng)


def _decide_payment(order: Order, rng: np.random.Generator) -> None:
    roll = float(rng.random())
    assert order.pay_ms is not None
    pay = order.pay_ms
    normal_latency = int(rng.gamma(4.0, 90.0)) + 60
    order.gateway_latency_ms = normal_latency
    if _in(POOL_EXHAUSTION, pay) and roll < 0.75:
        order.status, order.error_code, order.failure_stage = "FAILED", "ERR_DB_POOL_EXHAUSTED", "payment-db"
        order.gateway_latency_ms = None
        order.finished_ms = pay + 30_000 + int(rng.integers(0, 50))
        return
    if _in(GATEWAY_TIMEOUT, pay) and order.channel == "unionpay" and roll < 0.88:
        order.gateway_latency_ms = int(rng.integers(GATEWAY_TIMEOUT_MS + 100, 6_500))
        order.status, order.error_code, order.failure_stage = "FAILED", "ERR_TIMEOUT", "channel"
    elif roll < 0.0008:
        order.gateway_latency_ms = int(rng.integers(GATEWAY_TIMEOUT_MS + 50, 3_600))
        order.status, order.error_code, order.failure_stage = "FAILED", "ERR_TIMEOUT", "channel"
    elif roll < 0.013:
        order.status, order.error_code, order.failure_stage = "FAILED", "ERR_INSUFFICIENT_BALANCE", "channel"
    elif roll < 0.018 and order.channel in ("credit_card", "unionpay"):
        order.status, order.error_code, order.failure_stage = "FAILED", "ERR_CARD_DECLINED", "channel"
    elif roll < 0.0195:
        order.status, order.error_code, order.failure_stage = "FAILED", "ERR_CHANNEL_UNAVAILABLE", "channel"
    elif roll < 0.031:
        order.status = "REFUNDED"
    order.finished_ms = pay + (order.gateway_latency_ms or 0) + 40 + int(rng.integers(0, 30))


@dataclass(frozen=True)
class AnchorOrder:
    """An order with a fixed id and story that tests, fixtures and the demo query ("订单 123 …") rely on."""

    order_id: int
    created: tuple[int, int, int, int]
    paid: tuple[int, int, int, int] | None
    channel: str
    gateway_latency_ms: int | None
    error_code: str
    failure_stage: str
    sku_id: str
    amount: float
    remark: str | None = None


ANCHOR_ORDERS: tuple[AnchorOrder, ...] = (
    # order 123: the canonical gateway-timeout failure, 5.3 s against a 3000 ms timeout
    AnchorOrder(123, (14, 3, 1, 250), (14, 3, 6, 912), "unionpay", 5300, "ERR_TIMEOUT", "channel", "SKU-10427", 268.00),
    AnchorOrder(456, (9, 33, 40, 118), (9, 33, 52, 407), "alipay", None, "ERR_DB_POOL_EXHAUSTED", "payment-db",
                "SKU-10311", 99.90),
    AnchorOrder(789, (11, 2, 17, 640), None, "wechat_pay", None, "ERR_DEADLOCK", "inventory", FLASH_SALE_SKU, 59.00),
    AnchorOrder(INJECTION_ORDER_ID, (14, 10, 44, 31), (14, 10, 58, 600), "unionpay", 4870, "ERR_TIMEOUT", "channel",
                "SKU-10555", 1299.00, remark=INJECTION_TEXTS[1]),
    AnchorOrder(2024, (16, 36, 9, 5), None, "alipay", None, "ERR_RISK_TIMEOUT", "risk", "SKU-10777", 188.00),
    AnchorOrder(3141, (20, 4, 27, 880), None, "wechat_pay", None, "ERR_UPSTREAM_TIMEOUT", "product", "SKU-10234",
                45.50),
)
ANCHOR_ORDER_IDS: frozenset[int] = frozenset(anchor.order_id for anchor in ANCHOR_ORDERS)


def _ms(parts: tuple[int, int, int, int]) -> int:
    hour, minute, second, milli = parts
    return ((hour * 60 + minute) * 60 + second) * 1000 + milli


def _anchor_orders(rng: np.random.Generator) -> list[Order]:
    trace_by_order = {incident.anchor_order_id: incident.anchor_trace_id for incident in INCIDENTS}
    orders = []
    for anchor in ANCHOR_ORDERS:
        created = _ms(anchor.created)
        paid = _ms(anchor.paid) if anchor.paid else None
        order = Order(
            order_id=anchor.order_id, created_ms=created, user_id=int(rng.integers(10_000, 99_999)),
            sku_id=anchor.sku_id, quantity=1, amount=anchor.amount, channel=anchor.channel,
            trace_id=trace_by_order.get(anchor.order_id) or _trace_ids(rng, 1)[0], status="FAILED",
            error_code=anchor.error_code, failure_stage=anchor.failure_stage, pay_ms=paid,
            gateway_latency_ms=anchor.gateway_latency_ms, remark=anchor.remark,
        )
        if anchor.failure_stage == "payment-db":
            order.finished_ms = (paid or created) + 30_000
        elif paid is not None:
            order.finished_ms = paid + (anchor.gateway_latency_ms or 0) + 42
        else:
            order.finished_ms = created + 2_600
        orders.append(order)
    return orders


def generate_orders(rng: np.random.Generator, scale: float = 1.0) -> list[Order]:
    """All orders of the world day, sorted by creation time; the anchor orders are always present."""
    count = max(200, round(BASE_ORDER_COUNT * scale))
    minutes = np.sort(rng.choice(MINUTES, size=count, p=traffic_profile()))
    created = minutes * MS_PER_MINUTE + rng.integers(0, MS_PER_MINUTE, size=count)
    id_pool = np.array([value for value in range(1, 100_000) if value not in ANCHOR_ORDER_IDS])
    order_ids = rng.choice(id_pool, size=count, replace=False)
    channels = rng.choice(len(PAYMENT_CHANNELS), size=count, p=np.array(CHANNEL_SHARE))
    amounts = np.round(np.exp(rng.normal(4.6, 0.9, size=count)) + 1.0, 2)
    skus = rng.integers(10_000, 11_000, size=count)
    quantities = rng.choice([1, 1, 1, 1, 2, 2, 3], size=count)
    users = rng.integers(10_000, 99_999, size=count)
    coupon_rolls = rng.random(size=count)
    coupons = rng.integers(1000, 9999, size=count)
    traces = _trace_ids(rng, count)
    flash_rolls = rng.random(size=count)
    orders: list[Order] = []
    for index in range(count):
        sku = f"SKU-{int(skus[index])}"
        if _in(DEADLOCK, int(created[index])) and flash_rolls[index] < 0.6:
            sku = FLASH_SALE_SKU
        order = Order(
            order_id=int(order_ids[index]), created_ms=int(created[index]), user_id=int(users[index]), sku_id=sku,
            quantity=int(quantities[index]), amount=float(amounts[index]),
            channel=PAYMENT_CHANNELS[int(channels[index])], trace_id=traces[index],
            coupon_code=f"CPN-{int(coupons[index])}" if coupon_rolls[index] < 0.2 else None,
        )
        _decide_outcome(order, rng)
        orders.append(order)
    # the last minutes of the day: payments still outstanding
    for order in orders:
        if order.created_ms > (MINUTES - 8) * MS_PER_MINUTE and order.status == "PAID":
            order.status, order.pay_ms, order.gateway_latency_ms = "PENDING_PAYMENT", None, None
            order.finished_ms = order.created_ms
    orders.extend(_anchor_orders(rng))
    orders.sort(key=lambda order: (order.created_ms, order.order_id))
    return orders
