"""What the audit store costs per write and per session, on each backend, and what several workers get through.

What it measures, for each backend — a DuckDB file (held only while it writes, so other processes get in between),
the same file with one session's writes arriving in a burst (one opening shared), and a real PostgreSQL 15 started
on 127.0.0.1 for the run — the median milliseconds of each store call a session makes (start_session,
record_invocation, merge_self_evaluation, record_step, finish_session, session read) over ``--sessions`` sessions
whose calls are spaced further apart than the file's linger time, so every DuckDB write pays an opening of the
file. Then ``--workers`` processes run ``--per-worker`` scripted diagnoses each (no model) against PostgreSQL and
against one DuckDB file: sessions per second, and the ratio.

Rerun:  .venv/bin/python bench/store.py [--sessions 20] [--workers 4] [--per-worker 10]
PostgreSQL needs /usr/lib/postgresql/15/bin (scripts/test.sh installs it) and root (runuser -u postgres).
Run nothing else meanwhile on a 2-core machine; the figures are of this machine, with the duckdb and psycopg
versions printed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import duckdb
import psycopg

from evigate.store import AuditStore
from evigate.store.duck import LINGER_SECONDS

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.servers import audit_pg_server  # noqa: E402  (the test suite's server fixture)
from tests.store.test_store_load import run_workers  # noqa: E402


def time_calls(location: str, sessions: int, pause_s: float) -> dict[str, float]:
    """Median ms per store call over ``sessions`` sessions, ``pause_s`` idle before each call."""
    timings: dict[str, list[float]] = defaultdict(list)
    with AuditStore(location) as store:

        def timed(name: str, call, *args, **kwargs):
            time.sleep(pause_s)
            started = time.perf_counter()
            result = call(*args, **kwargs)
            timings[name].append((time.perf_counter() - started) * 1000)
            return result

        for number in range(sessions):
            session_id = timed("start_session", store.start_session, f"q{number}", settings={"database": location})
            timed("record_invocation", store.record_invocation, session_id, 1, "query_order", {"order_id": 123},
                  "order 123: FAILED ERR_TIMEOUT " * 20)  # fmt: skip
            timed("merge_self_evaluation", store.merge_self_evaluation, session_id, "rule_evaluation", {"score": 65})
            timed("record_step", store.record_step, session_id, 1, "executor", thought="t", model_output="o" * 500)
            timed("finish_session", store.finish_session, session_id, output_type="NORMAL", verdict="PASS",
                  answer="答案", rounds=1, groundedness_score=0.9)  # fmt: skip
            timed("session", store.session, session_id)
    return {name: statistics.median(values) for name, values in timings.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--per-worker", type=int, default=10)
    args = parser.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cores; duckdb {duckdb.__version__}; "
          f"psycopg {psycopg.__version__}; DuckDB linger {LINGER_SECONDS}s")  # fmt: skip
    with audit_pg_server() as server:
        print(f"PostgreSQL 15 initdb + start: {server.startup_seconds:.1f}s")
        with tempfile.TemporaryDirectory() as scratch:
            cold = time_calls(str(Path(scratch) / "cold.duckdb"), args.sessions, LINGER_SECONDS * 1.5)
            burst = time_calls(str(Path(scratch) / "burst.duckdb"), args.sessions, 0.0)
            pg = time_calls(server.fresh_schema_url(), args.sessions, 0.0)
            print(f"\nmedian ms per call over {args.sessions} sessions")
            print(f"{'call':<24}{'duckdb, file reopened':>24}{'duckdb, burst':>16}{'postgresql':>12}")
            for name in cold:
                print(f"{name:<24}{cold[name]:>24.2f}{burst[name]:>16.2f}{pg[name]:>12.2f}")
            workers, per_worker = args.workers, args.per_worker
            world = Path(scratch) / "world.duckdb"
            _, duck_s = run_workers(str(world), workers, per_worker)
            _, pg_s = run_workers(server.fresh_schema_url(), workers, per_worker)
            total = workers * per_worker
            print(f"\n{workers} worker processes x {per_worker} scripted sessions (process start and world build "
                  "included)")  # fmt: skip
            print(f"  one DuckDB file: {duck_s:.1f}s, {total / duck_s:.2f} sessions/s")
            print(f"  PostgreSQL 15:   {pg_s:.1f}s, {total / pg_s:.2f} sessions/s (x{duck_s / pg_s:.2f})")


if __name__ == "__main__":
    main()
