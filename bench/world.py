"""Benchmark: demo-world build time and per-tool p50 latency through the recorded Toolbox.

What: `build_world` of the default world (seed 20261130, scale 1.0) into a fresh DuckDB file, repeated; then each
built-in tool called through `Toolbox.call` (validation + query + `tool_invocation` insert) on typical arguments.
Rerun: `/work/venv/bin/python bench/world.py [--repeats 3] [--calls 30]`.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from evigate.demo import build_world, demo_toolbox, world_stats
from evigate.store import AuditStore

TOOL_CALLS: dict[str, list[dict]] = {
    "query_order": [{"order_id": 123}, {"order_id": 456}, {"order_id": 99_999_999}],
    "query_logs": [
        {"order_id": 123},
        {"error_code": "ERR_TIMEOUT", "time_window": "2026-11-28 14:00/14:30"},
        {"service": "payment-service", "level": "WARN", "limit": 100},
        {"keyword": "leak"},
    ],
    "query_metrics": [
        {"service": "pay-gateway", "metric": "latency_p99", "time_window": "13:50/14:30"},
        {"service": "payment-service", "metric": "pool_pending"},
        {"service": "redis-cluster", "metric": "cache_hit_rate", "start": "19:30", "end": "20:30"},
    ],
    "lookup_knowledge": [
        {"query": "ERR_TIMEOUT 是什么意思"},
        {"query": "连接池耗尽怎么排查"},
        {"query": "HikariCP pending", "top_k": 5},
    ],
    "get_current_datetime": [{}],
}


def bench_build(folder: Path, repeats: int) -> tuple[list[float], dict[str, int]]:
    times = []
    counts: dict[str, int] = {}
    for index in range(repeats):
        with AuditStore(folder / f"build-{index}.duckdb") as store, store.cursor() as cursor:
            started = time.perf_counter()
            build_world(cursor)
            times.append(time.perf_counter() - started)
            counts = world_stats(cursor)
    return times, counts


def bench_tools(folder: Path, calls: int) -> dict[str, list[float]]:
    latencies: dict[str, list[float]] = {}
    with AuditStore(folder / "build-0.duckdb") as store:
        toolbox = demo_toolbox(store, store.start_session("bench"))
        for name, variants in TOOL_CALLS.items():
            toolbox.call(name, **variants[0])  # warm caches (knowledge index, world check)
            for index in range(calls):
                started = time.perf_counter()
                result = toolbox.call(name, **variants[index % len(variants)])
                latencies.setdefault(name, []).append((time.perf_counter() - started) * 1000)
                assert result.success, result.error
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="world builds to time")
    parser.add_argument("--calls", type=int, default=30, help="calls per tool")
    options = parser.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as folder:
        times, counts = bench_build(Path(folder), options.repeats)
        print(
            f"world build (default seed, scale 1.0), {options.repeats} runs: "
            f"p50 {statistics.median(times):.2f} s, max {max(times):.2f} s"
        )
        for table, count in counts.items():
            print(f"  {table:<26}{count:>9,}")
        latencies = bench_tools(Path(folder), options.calls)
        print(f"per-tool latency through Toolbox.call (recorded), {options.calls} calls each:")
        for name, values in latencies.items():
            p95 = sorted(values)[int(len(values) * 0.95) - 1]
            print(f"  {name:<22} p50 {statistics.median(values):7.2f} ms   p95 {p95:7.2f} ms")


if __name__ == "__main__":
    main()
