"""Minute-level metrics of every service: a diurnal baseline with noise, then each incident's overlay.

Payment metrics are derived from the generated payment attempts, so the pay-gateway's error rate and p99
latency agree with the orders a user can look up.
"""

from __future__ import annotations

import numpy as np

from evigate.demo.catalog import APP_SERVICES, CACHED_SERVICES, MINUTES, POOL_MAX
from evigate.demo.orders import (
    CACHE_AVALANCHE,
    DEADLOCK,
    GATEWAY_TIMEOUT,
    MS_PER_MINUTE,
    POOL_EXHAUSTION,
    RETRY_STORM,
    SLOW_SQL,
    SMS_OUTAGE,
    Order,
    minute_of,
    traffic_profile,
)

Series = dict[tuple[str, str], np.ndarray]

BASE_QPS = {
    "api-gateway": 420.0, "order-service": 45.0, "payment-service": 6.0, "pay-gateway": 4.0,
    "inventory-service": 30.0, "product-service": 950.0, "user-service": 260.0, "risk-service": 12.0,
    "coupon-service": 18.0, "notification-service": 5.0, "settlement-service": 2.0,
}
BASE_LATENCY_MS = {
    "api-gateway": 180.0, "order-service": 150.0, "payment-service": 220.0, "pay-gateway": 650.0,
    "inventory-service": 60.0, "product-service": 40.0, "user-service": 30.0, "risk-service": 90.0,
    "coupon-service": 35.0, "notification-service": 120.0, "settlement-service": 300.0,
}
TECHNICAL_GATEWAY_ERRORS = frozenset({"ERR_TIMEOUT", "ERR_CHANNEL_UNAVAILABLE"})


def _ramp(series: np.ndarray, window: tuple[int, int], peak: float, *, rise: int = 3, fall: int = 3) -> None:
    """Raise a series towards `peak` inside a window with short linear ramps at both ends (in place)."""
    start, end = window
    for minute in range(max(0, start - rise), min(MINUTES, end + fall)):
        if minute < start:
            weight = (minute - (start - rise) + 1) / (rise + 1)
        elif minute >= end:
            weight = 1 - (minute - end + 1) / (fall + 1)
        else:
            weight = 1.0
        series[minute] = series[minute] * (1 - weight) + peak * weight


class _MetricBuilder:
    """Holds the generator and load curve while the per-service series are drawn."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        profile = traffic_profile()
        self.load = profile / profile.max()
        self.series: Series = {}

    def noise(self, scale: float) -> np.ndarray:
        return self.rng.normal(0.0, scale, size=MINUTES)

    def jitter(self, window: tuple[int, int], low: float, high: float) -> np.ndarray:
        return self.rng.uniform(low, high, size=window[1] - window[0])

    def put(self, service: str, metric: str, values: np.ndarray) -> np.ndarray:
        self.series[(service, metric)] = values
        return values

    def app_baselines(self) -> None:
        for service in APP_SERVICES:
            load = self.load
            self.put(service, "qps", np.maximum(0.1, BASE_QPS[service] * (0.12 + load) * (1 + self.noise(0.05))))
            self.put(service, "cpu_usage", np.clip(12 + 38 * load + self.noise(2.5), 3, 99))
            self.put(service, "memory_usage", np.clip(52 + 9 * load + self.noise(1.2), 20, 99))
            latency = BASE_LATENCY_MS[service] * (0.8 + 0.5 * load) * self.rng.lognormal(0, 0.12, size=MINUTES)
            self.put(service, "latency_p99", latency)
            self.put(service, "error_rate", np.abs(self.noise(0.15)) + 0.1)
        for service, size in POOL_MAX.items():
            active = np.clip(np.round(size * (0.12 + 0.33 * self.load) + self.noise(1.5)), 1, size - 2)
            self.put(service, "pool_active", active)
            self.put(service, "pool_idle", size - active)
            self.put(service, "pool_pending", np.zeros(MINUTES))
        for service in CACHED_SERVICES:
            self.put(service, "cache_hit_rate", np.clip(97.5 + self.noise(0.6), 90, 99.9))
        self.put("api-gateway", "http_429_count", np.round(np.abs(self.noise(1.5))))

    def infra_baselines(self) -> None:
        load = self.load
        self.put("mysql-order", "qps", 2200 * (0.15 + load) * (1 + self.noise(0.04)))
        self.put("mysql-order", "cpu_usage", np.clip(18 + 30 * load + self.noise(2), 5, 99))
        self.put("mysql-order", "active_connections", np.round(120 + 260 * load + self.noise(8)))
        self.put("mysql-order", "slow_query_count", np.round(np.abs(self.noise(0.8))))
        self.put("mysql-order", "lock_wait_count", np.round(np.abs(self.noise(3.0))))
        self.put("mysql-order", "deadlock_count", np.zeros(MINUTES))
        self.put("redis-cluster", "qps", 14000 * (0.15 + load) * (1 + self.noise(0.04)))
        self.put("redis-cluster", "cache_hit_rate", np.clip(97.0 + self.noise(0.5), 90, 99.9))
        self.put("redis-cluster", "cpu_usage", np.clip(10 + 25 * load + self.noise(1.5), 3, 99))
        self.put("redis-cluster", "memory_usage", np.clip(61 + self.noise(0.4), 40, 99))
        self.put("redis-cluster", "expired_keys", np.round(1800 + 900 * load + self.noise(120)))

    def payment_from_orders(self, orders: list[Order]) -> None:
        """pay-gateway error rate and p99 latency per minute, computed from the payment attempts."""
        attempts = np.zeros(MINUTES)
        failures = np.zeros(MINUTES)
        latencies: dict[int, list[int]] = {}
        for order in orders:
            if order.pay_ms is None or order.gateway_latency_ms is None:
                continue
            minute = min(MINUTES - 1, order.pay_ms // MS_PER_MINUTE)
            attempts[minute] += 1
            failures[minute] += order.error_code in TECHNICAL_GATEWAY_ERRORS
            latencies.setdefault(minute, []).append(order.gateway_latency_ms)
        rate = self.series[("pay-gateway", "error_rate")]
        observed = attempts > 0
        rate[observed] = np.maximum(rate[observed], 100 * failures[observed] / attempts[observed])
        latency = self.series[("pay-gateway", "latency_p99")]
        for minute, values in latencies.items():
            latency[minute] = max(latency[minute], float(np.percentile(values, 99)))

    def incidents(self) -> None:
        s, j = self.series, self.jitter
        # INC-01 slow SQL: the reconciliation batch scans t_payment_record
        s[("mysql-order", "slow_query_count")][slice(*SLOW_SQL)] = np.round(j(SLOW_SQL, 22, 61))
        s[("mysql-order", "cpu_usage")][slice(*SLOW_SQL)] = j(SLOW_SQL, 71, 88)
        s[("mysql-order", "lock_wait_count")][slice(*SLOW_SQL)] = np.round(j(SLOW_SQL, 30, 80))
        s[("settlement-service", "latency_p99")][slice(*SLOW_SQL)] = j(SLOW_SQL, 6000, 12000)
        s[("settlement-service", "qps")][slice(*SLOW_SQL)] = j(SLOW_SQL, 30, 45)
        s[("order-service", "latency_p99")][slice(*SLOW_SQL)] = j(SLOW_SQL, 1100, 1900)
        # INC-02 SMS vendor outage
        s[("notification-service", "error_rate")][slice(*SMS_OUTAGE)] = j(SMS_OUTAGE, 62, 96)
        # INC-03 connection leak after the 09:25 deploy: pool full, pending threads pile up
        leak = (minute_of(9, 26), POOL_EXHAUSTION[1])
        _ramp(s[("payment-service", "pool_active")], leak, 50, rise=1, fall=2)
        s[("payment-service", "pool_active")][slice(*POOL_EXHAUSTION)] = 50
        s[("payment-service", "pool_idle")][:] = 50 - s[("payment-service", "pool_active")]
        pending = s[("payment-service", "pool_pending")]
        start, end = POOL_EXHAUSTION
        pending[start:end] = np.round(np.minimum(128, np.linspace(9, 160, end - start)) + j(POOL_EXHAUSTION, -4, 4))
        s[("payment-service", "latency_p99")][slice(*POOL_EXHAUSTION)] = j(POOL_EXHAUSTION, 29000, 30500)
        s[("payment-service", "error_rate")][slice(*POOL_EXHAUSTION)] = j(POOL_EXHAUSTION, 61, 78)
        s[("payment-service", "cpu_usage")][slice(*POOL_EXHAUSTION)] = j(POOL_EXHAUSTION, 38, 47)
        s[("pay-gateway", "qps")][slice(*POOL_EXHAUSTION)] *= 0.3
        # INC-04 flash-sale deadlocks on t_stock / t_stock_log
        s[("inventory-service", "qps")][slice(*DEADLOCK)] *= 2.5
        s[("inventory-service", "error_rate")][slice(*DEADLOCK)] = j(DEADLOCK, 18, 31)
        s[("inventory-service", "latency_p99")][slice(*DEADLOCK)] = j(DEADLOCK, 800, 1500)
        s[("mysql-order", "deadlock_count")][slice(*DEADLOCK)] = np.round(j(DEADLOCK, 5, 21))
        s[("mysql-order", "lock_wait_count")][slice(*DEADLOCK)] = np.round(j(DEADLOCK, 200, 420))
        # INC-05 unionpay slow upstream; payment-service's pool stays healthy (the red herring)
        s[("pay-gateway", "latency_p99")][slice(*GATEWAY_TIMEOUT)] = np.maximum(
            s[("pay-gateway", "latency_p99")][slice(*GATEWAY_TIMEOUT)], j(GATEWAY_TIMEOUT, 4800, 6400)
        )
        # the orders table is a sample of the traffic, so minutes without a sampled unionpay attempt still fail
        s[("pay-gateway", "error_rate")][slice(*GATEWAY_TIMEOUT)] = np.maximum(
            s[("pay-gateway", "error_rate")][slice(*GATEWAY_TIMEOUT)], j(GATEWAY_TIMEOUT, 9, 16)
        )
        s[("payment-service", "latency_p99")][slice(*GATEWAY_TIMEOUT)] = j(GATEWAY_TIMEOUT, 5000, 6600)
        # INC-06 risk-service GC pauses, retries without backoff, gateway rate limiting
        s[("risk-service", "latency_p99")][slice(*RETRY_STORM)] = j(RETRY_STORM, 2500, 4100)
        s[("risk-service", "cpu_usage")][slice(*RETRY_STORM)] = j(RETRY_STORM, 88, 98)
        s[("risk-service", "qps")][slice(*RETRY_STORM)] *= 3.2
        s[("risk-service", "error_rate")][slice(*RETRY_STORM)] = j(RETRY_STORM, 22, 38)
        s[("order-service", "latency_p99")][slice(*RETRY_STORM)] = j(RETRY_STORM, 2600, 3400)
        s[("api-gateway", "http_429_count")][slice(*RETRY_STORM)] = np.round(j(RETRY_STORM, 400, 1500))
        s[("api-gateway", "error_rate")][slice(*RETRY_STORM)] = j(RETRY_STORM, 14, 26)
        s[("api-gateway", "qps")][slice(*RETRY_STORM)] *= 1.8
        # INC-07 uniform TTL expiry at 20:00: hit rate collapses, the database takes the load
        start, end = CACHE_AVALANCHE
        recovery = np.linspace(18.2, 95.0, end - start)
        for service in ("redis-cluster", "product-service"):
            s[(service, "cache_hit_rate")][start:end] = recovery + j(CACHE_AVALANCHE, -1.5, 1.5)
        s[("redis-cluster", "expired_keys")][start] = 48213
        s[("mysql-order", "qps")][start:end] *= np.linspace(6.0, 1.4, end - start)
        s[("mysql-order", "cpu_usage")][start:end] = np.linspace(92, 55, end - start)
        s[("product-service", "latency_p99")][slice(*CACHE_AVALANCHE)] = j(CACHE_AVALANCHE, 1800, 2400)
        s[("product-service", "error_rate")][slice(*CACHE_AVALANCHE)] = j(CACHE_AVALANCHE, 5, 9)
        s[("order-service", "latency_p99")][slice(*CACHE_AVALANCHE)] = j(CACHE_AVALANCHE, 1700, 2150)


ROUNDING = {"pool_active": 0, "pool_idle": 0, "pool_pending": 0, "http_429_count": 0, "slow_query_count": 0,
            "lock_wait_count": 0, "deadlock_count": 0, "expired_keys": 0, "active_connections": 0}


def generate_metrics(rng: np.random.Generator, orders: list[Order]) -> Series:
    """Every (service, metric) series: 1440 minute values, rounded the way a metrics backend would show them."""
    builder = _MetricBuilder(rng)
    builder.app_baselines()
    builder.infra_baselines()
    builder.payment_from_orders(orders)
    builder.incidents()
    return {
        key: np.round(np.maximum(values, 0.0), ROUNDING.get(key[1], 1)) for key, values in builder.series.items()
    }
