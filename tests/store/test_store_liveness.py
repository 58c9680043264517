"""Session liveness: a session whose process was killed (-9) is marked ``interrupted`` when a store is opened;
a live session of another process is never touched; the owner's heartbeat keeps a session alive across hosts."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from evigate.store import AuditStore, liveness
from evigate.store.rows import utc_now

REPO = Path(__file__).resolve().parents[2]
OWNER = """
import sys, time
from evigate.store import AuditStore
store = AuditStore(sys.argv[1])
print(store.start_session("订单 123 为什么失败？"), flush=True)
time.sleep(600)
"""


def update(store: AuditStore, statement: str, params: list[Any]) -> None:
    """Rewrite audit rows as another host or an older build would have written them (``?`` placeholders)."""
    if store.backend == "duckdb":
        with store.cursor() as cursor:
            cursor.execute(statement, params)
        return
    with store._backend._connection() as connection:
        connection.execute(statement.replace("?", "%s"), params)


def start_owner(location: str) -> tuple[subprocess.Popen[str], str]:
    """A real child process that starts a session and then runs (sleeps) until killed."""
    child = subprocess.Popen([sys.executable, "-c", OWNER, location], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    session_id = child.stdout.readline().strip()
    assert session_id, child.stderr.read() if child.stderr else ""
    return child, session_id


def test_a_session_of_a_process_killed_with_sigkill_is_interrupted_when_a_store_opens(store_location: str) -> None:
    child, session_id = start_owner(store_location)
    try:
        with AuditStore(store_location) as store:  # the owner lives: its session is left alone
            row = store.session(session_id)
            assert row["status"] == "running" and row["owner_pid"] == child.pid and row["owner_started"]
            assert store.interrupt_orphans() == []
    finally:
        child.kill()  # SIGKILL: the child can mark nothing
        child.wait()
    with AuditStore(store_location) as store:
        row = store.session(session_id)
        assert row["status"] == "interrupted" and row["finished_at"] is not None
        assert f"process {child.pid}" in row["error"] and "gone" in row["error"]
        assert store.interrupt_orphans() == []  # once


def test_a_reused_pid_is_not_taken_for_the_owner(store_location: str) -> None:
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        with AuditStore(store_location) as store:
            session_id = store.start_session("q")
            me = liveness.this_process()
            assert me.started is not None, "this test needs /proc"
            forged = f"{me.machine}/1"  # same machine, a start time the live process does not have
            update(store, "UPDATE diagnosis_session SET owner_pid = ?, owner_started = ? WHERE session_id = ?",
                        [stranger.pid, forged, session_id])
            assert store.interrupt_orphans() == [session_id]
            assert "another process" in store.session(session_id)["error"]
    finally:
        stranger.kill()
        stranger.wait()


def test_another_hosts_session_is_interrupted_only_after_its_heartbeat_went_stale(store_location: str) -> None:
    with AuditStore(store_location) as store:
        fresh, stale, unowned = store.start_session("fresh"), store.start_session("stale"), store.start_session("old")
        old = utc_now() - timedelta(seconds=liveness.STALE_AFTER_SECONDS + 60)
        update(store, "UPDATE diagnosis_session SET owner_host = 'elsewhere', owner_started = 'b/n/1' "
                           "WHERE session_id IN (?, ?)", [fresh, stale])
        update(store, "UPDATE diagnosis_session SET heartbeat_at = ? WHERE session_id = ?", [old, stale])
        # a row from before the owner columns existed: only its age tells
        update(store, "UPDATE diagnosis_session SET owner_host = NULL, owner_pid = NULL, owner_started = NULL, "
                           "heartbeat_at = NULL, created_at = ? WHERE session_id = ?", [old, unowned])
        assert sorted(store.interrupt_orphans()) == sorted([stale, unowned])
        assert store.session(fresh)["status"] == "running"
        assert "no heartbeat" in store.session(stale)["error"] and "elsewhere" in store.session(stale)["error"]


def test_the_owner_refreshes_the_heartbeat_while_the_session_runs(
    store_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(liveness, "HEARTBEAT_SECONDS", 0.2)
    with AuditStore(store_location) as store:
        session_id = store.start_session("q")
        first = store.session(session_id)["heartbeat_at"]
        deadline = time.monotonic() + 10
        while store.session(session_id)["heartbeat_at"] == first:
            assert time.monotonic() < deadline, "the heartbeat did not move"
            time.sleep(0.1)
        store.finish_session(session_id, output_type=None, verdict=None, answer="", rounds=1,
                             groundedness_score=None)
        time.sleep(0.5)
        finished = store.session(session_id)
        time.sleep(0.5)
        assert store.session(session_id)["heartbeat_at"] == finished["heartbeat_at"]  # no beats after the end


def test_a_session_of_this_process_is_never_its_own_orphan(store_location: str) -> None:
    with AuditStore(store_location) as store:
        session_id = store.start_session("q")
        with AuditStore(store_location) as second:  # a second store of the same process opens and checks
            assert second.interrupt_orphans() == []
        assert store.session(session_id)["status"] == "running"
        assert store.session(session_id)["owner_pid"] == os.getpid()
