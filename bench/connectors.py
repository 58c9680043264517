"""Benchmark: per-call latency of every connector on the Northwind test domain, through the recorded Toolbox.

What: starts a real Prometheus (the fixture's OpenMetrics data) and PostgreSQL 15 on 127.0.0.1, loads the
Northwind domain (tests/fixtures/domains/northwind), then calls each of its five tools `--calls` times through
`Toolbox.call` (validation + query + `tool_invocation` insert) and prints p50/p90 per tool. For the MCP tool it
also times a fresh session per call (what the connector did before sessions were kept open) against the live
session, and prints the ratio.
Rerun (root, with the Debian packages scripts/test.sh installs): `.venv/bin/python bench/connectors.py [--calls 10]`.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from evigate.domain import load_domain  # noqa: E402
from evigate.store import AuditStore  # noqa: E402
from evigate.tools import Toolbox  # noqa: E402
from evigate.tools.connectors.mcp_session import run_async  # noqa: E402
from tests.servers import postgres_server, prometheus_server  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "domains" / "northwind"
CALLS = {
    "shipment_status": {"shipment_id": "SHP-204311"},
    "search_logs": {"business_id": "SHP-204311", "level": "ERROR"},
    "dispatch_latency": {"service": "dispatch-api", "start": "2026-04-14 09:00", "end": "2026-04-14 10:00"},
    "lookup_runbook": {"query": "MANIFEST_LOCK_WAIT"},
    "promql_instant": {"query": "max(dispatch_request_duration_p99_seconds)", "time": "2026-04-14T09:20:00Z"},
}


def _percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):8.1f} ms   p90 {p90:8.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10)
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="evigate-bench-connectors-"))
    openmetrics = (FIXTURE / "data" / "series.om").read_text(encoding="utf-8")
    with prometheus_server(openmetrics, work / "prometheus") as url, postgres_server() as postgres:
        with psycopg.connect(postgres.dsn, autocommit=True) as admin:
            admin.execute("CREATE DATABASE northwind")
            admin.execute("CREATE ROLE northwind_reader LOGIN PASSWORD 'bench'")
        with psycopg.connect(postgres.dsn.replace("dbname=postgres", "dbname=northwind"), autocommit=True) as db:
            db.execute((FIXTURE / "data" / "seed.sql").read_text(encoding="utf-8"))
        directory = work / "northwind"
        shutil.copytree(FIXTURE, directory)
        config = directory / "domain.yaml"
        config.write_text(config.read_text().replace("@PROMETHEUS_URL@", url).replace("@PG_PORT@", str(postgres.port)))
        os.environ["NORTHWIND_PG_PASSWORD"] = "bench"
        started = time.perf_counter()
        domain = load_domain(str(directory))
        registry = domain.build_registry()
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
        print(f"domain load + tool build (MCP server listed once): {(time.perf_counter() - started) * 1000:.0f} ms")
        with AuditStore(work / "audit.duckdb") as store:
            toolbox = Toolbox(store, store.start_session(f"bench {uuid.uuid4().hex[:6]}"), registry=registry,
                              source=domain.data_source(store))
            for tool, args in CALLS.items():
                samples = []
                for _ in range(options.calls):
                    begin = time.perf_counter()
                    result = toolbox.call(tool, **args)
                    samples.append((time.perf_counter() - begin) * 1000)
                    assert result.success, result.error
                source = next(spec.source for spec in domain.tools if spec.name == tool)
                print(f"{tool:18s} {source:16s} "
                      f"{_percentiles(samples)}   ({options.calls} calls)")
            mcp_tool = registry.get("promql_instant")
            live = statistics.median(_time_calls(lambda: toolbox.call("promql_instant", **CALLS["promql_instant"]),
                                                 options.calls))
            fresh_calls = max(3, options.calls // 3)
            fresh = statistics.median(_time_calls(lambda: _fresh_call(mcp_tool), fresh_calls))
            print(f"MCP stdio: fresh session per call p50 {fresh:.0f} ms ({fresh_calls} calls) vs live session "
                  f"p50 {live:.0f} ms: {fresh / live:.0f}x")
    shutil.rmtree(work, ignore_errors=True)


def _fresh_call(tool) -> None:
    """The MCP call on a session of its own: start the stdio server, initialise, call, stop."""
    async def once():
        async with tool.client.open() as session:
            return await session.call_tool("execute_query", CALLS["promql_instant"])

    run_async(once, tool.client.source.timeout_s)


def _time_calls(call, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        begin = time.perf_counter()
        call()
        samples.append((time.perf_counter() - begin) * 1000)
    return samples


if __name__ == "__main__":
    main()
