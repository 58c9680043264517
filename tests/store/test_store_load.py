"""Several worker processes on one audit database: every session complete, nothing lost, nothing mixed.

PostgreSQL: 4 processes × 25 sessions (issue 12). DuckDB: 4 processes × 5 sessions on one file, which works
because each process holds the file only while it writes and waits, bounded, while another one does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evigate.signatures import SELF_EVALUATION_SLOTS
from evigate.store import AuditStore
from tests.servers import PgServer
from tests.store.load_worker import tag_of

REPO = Path(__file__).resolve().parents[2]


def run_workers(location: str, workers: int, sessions: int, timeout_s: float = 900) -> tuple[list[dict], float]:
    started = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.store.load_worker", location, str(worker), str(sessions)],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for worker in range(workers)
    ]
    reported: list[dict] = []
    for process in processes:
        out, err = process.communicate(timeout=timeout_s)
        assert process.returncode == 0, err[-3000:]
        reported += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return reported, time.monotonic() - started


def check_every_session(store: AuditStore, reported: list[dict], expected: int) -> None:
    assert len(reported) == expected
    assert len({entry["session_id"] for entry in reported}) == expected
    for entry in reported:
        session = store.session(entry["session_id"])
        assert session["status"] == "finished", session
        assert tag_of(session["query"]) == entry["tag"]
        assert set(session["self_evaluation"]) == set(SELF_EVALUATION_SLOTS), session["self_evaluation"].keys()
        invocations = store.invocations(entry["session_id"])
        rounds = session["rounds"]  # a LOW_CONFID first round is retried once, with the same three calls
        assert [inv.tool_name for inv in invocations] == ["query_order", "query_logs", "lookup_knowledge"] * rounds
        assert [inv.round for inv in invocations] == [n for n in range(1, rounds + 1) for _ in range(3)]
        assert all(inv.session_id == entry["session_id"] for inv in invocations)
        lookups = [inv.input for inv in invocations if inv.tool_name == "lookup_knowledge"]
        assert lookups == [{"query": f"ERR_TIMEOUT {entry['tag']}"}] * rounds  # its own session's calls only
        steps = store.steps(entry["session_id"])
        assert {step["agent"] for step in steps} >= {"planner", "executor", "verifier"}
        assert not any(step["agent"] == "rule_evaluation" for step in steps)  # no failed or late rule writer


@pytest.mark.servers
def test_four_workers_times_25_sessions_on_one_postgresql(pg_server: PgServer) -> None:
    url = pg_server.fresh_schema_url()
    AuditStore(url).close()  # migrated once up front; the workers' own migration check is then a no-op
    reported, elapsed = run_workers(url, workers=4, sessions=25)
    with AuditStore(url, read_only=True) as store:
        check_every_session(store, reported, expected=100)
        assert len(store.sessions(limit=1000)) == 100
    print(f"\n4 workers x 25 sessions on PostgreSQL 15: {elapsed:.1f}s ({100 / elapsed:.2f} sessions/s)")


@pytest.mark.servers
def test_four_workers_on_one_duckdb_file_take_turns(private_world: Path) -> None:
    reported, elapsed = run_workers(str(private_world), workers=4, sessions=5)
    with AuditStore(private_world, read_only=True) as store:
        check_every_session(store, reported, expected=20)
    print(f"\n4 workers x 5 sessions on one DuckDB file: {elapsed:.1f}s")
