"""p50 / p99 of what `evigate serve` and the program add per request, with scripted agents (no model).

What it measures: a real uvicorn server on 127.0.0.1 (free port) over a DiagnosisPool of ``--workers`` programs
whose four agents are the scripted stand-ins of tests/modules/scripted.py (they answer at once, but the executor
runs the real recorded tools on the demo world). httpx sends ``--requests`` POST /v1/diagnoses from
``--concurrency`` client threads. Per request:

  round trip  the client's wall time for the HTTP request (queueing + program + HTTP)
  agents      the sum of the session's agent_step latencies from the audit (the scripted agents' own time,
              tool calls of the executor included, since those run inside the executor's call)
  overhead    round trip − agents: everything that is the program's and the server's own work — sessions and
              steps written to the audit store, parsing, the gatekeeper, the verdict, the composer guard, the
              rule-evaluation writer, JSON and HTTP — plus queueing when concurrency exceeds workers.

With a real model the agents' time is seconds to minutes; this overhead is what remains on top of it.

Rerun:  .venv/bin/python bench/serve.py [--requests 200] [--concurrency 4] [--workers 4] [--queue 16]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.modules.scripted: the scripted agents

from evigate.demo import ensure_world
from evigate.optimize.ui import free_port
from evigate.serve.app import ServeOptions, create_app
from evigate.serve.pool import DiagnosisPool
from evigate.serve.runner import ThreadedServer
from evigate.store import AuditStore
from tests.serve.conftest import QUERY, scripted_factory


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--queue", type=int, default=16)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="evigate-bench-serve-"))
    try:
        database = workdir / "evigate.duckdb"
        with AuditStore(database) as store:
            ensure_world(store)
        pool = DiagnosisPool(scripted_factory(database), workers=args.workers, queue_size=args.queue)
        server = ThreadedServer(create_app(pool, ServeOptions()), port=free_port()).start()
        with httpx.Client(base_url=server.url, timeout=120,
                          limits=httpx.Limits(max_connections=args.concurrency)) as client:

            def one(index: int) -> tuple[float, str, int]:
                started = time.perf_counter()
                response = client.post("/v1/diagnoses", json={"query": f"{QUERY} #{index}"})
                elapsed = time.perf_counter() - started
                return elapsed, response.json().get("session_id", ""), response.status_code

            for index in range(3):  # warm-up: imports, first writes, connection setup
                one(-index)
            wall = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(args.concurrency) as threads:
                rows = list(threads.map(one, range(args.requests)))
            wall = time.perf_counter() - wall
        server.stop()
        agents_s = {}
        for _, session_id, status in rows:
            if status == 200:
                steps = pool.store.steps(session_id)
                agents_s[session_id] = sum(float(step.get("latency_ms") or 0) for step in steps) / 1000
        pool.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    ok = [row for row in rows if row[2] == 200]
    trips = [row[0] * 1000 for row in ok]
    agents = [agents_s[row[1]] * 1000 for row in ok]
    overhead = [trip - agent for trip, agent in zip(trips, agents, strict=True)]
    print(f"evigate serve, scripted agents · {len(ok)}/{len(rows)} answered 200 · {args.concurrency} client threads, "
          f"{args.workers} workers, queue {args.queue}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"throughput {len(ok) / wall:.1f} requests/s over {wall:.1f}s")
    print(f"{'ms per request':<14} {'p50':>8} {'p99':>8} {'mean':>8}")
    for name, values in (("round trip", trips), ("agents", agents), ("overhead", overhead)):
        print(f"{name:<14} {percentile(values, 50):8.1f} {percentile(values, 99):8.1f} {statistics.mean(values):8.1f}")
    print(f"overhead / round trip at p50: {percentile(overhead, 50) / percentile(trips, 50):.0%}")


if __name__ == "__main__":
    main()
