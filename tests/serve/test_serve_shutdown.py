"""SIGTERM on a real server process with a queue: queued requests get 503 + Retry-After (JSON), streams end with
an ``error`` event, the running session is marked interrupted after the grace period, and the log stays clean."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from evigate.optimize.ui import free_port
from evigate.store import AuditStore
from tests.serve.conftest import QUERY
from tests.serve.test_serve_api import sse_events, wait_until

pytestmark = pytest.mark.servers  # a server process and a grace period: ~15 s

GRACE_S = 3.0
REPO = Path(__file__).resolve().parents[2]


def wait_for_health(process: subprocess.Popen[str], port: int) -> str:
    """The server's URL once /healthz answers (fails with its output if the process ends first)."""
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        try:
            httpx.get(f"{url}/healthz", timeout=2)
            return url
        except httpx.TransportError:
            assert time.monotonic() < deadline, "the server did not come up"
            time.sleep(0.3)


def start_process(database: Path, port: int) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "tests.serve.scripted_server", str(database), str(port), "--workers", "1",
               "--queue", "2", "--graceful", str(GRACE_S), "--sleep", "60"]
    process = subprocess.Popen(command, cwd=REPO, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_for_health(process, port)
    return process


def test_sigterm_with_a_queue_answers_everyone_in_the_api_shape_and_logs_no_traceback(private_world: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = start_process(private_world, port)
    answers: dict[str, Any] = {}

    def stream(name: str) -> None:
        with httpx.stream("POST", f"{url}/v1/diagnoses?stream=true", json={"query": f"{QUERY} {name}"},
                          timeout=60) as response:
            answers[name] = (response.status_code, sse_events(response.read().decode()))

    def post(name: str) -> None:
        answers[name] = httpx.post(f"{url}/v1/diagnoses", json={"query": f"{QUERY} {name}"}, timeout=60)

    def load() -> dict[str, int]:
        return httpx.get(f"{url}/healthz", timeout=5).json()

    try:
        threads = [threading.Thread(target=stream, args=("running",))]
        threads[0].start()
        wait_until(lambda: load()["running"] == 1, timeout=60)
        threads += [threading.Thread(target=post, args=("queued-json",)),
                    threading.Thread(target=stream, args=("queued-stream",))]
        for thread in threads[1:]:
            thread.start()
        wait_until(lambda: load()["queued"] == 2, timeout=30)
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        threads[1].join(timeout=30)
        threads[2].join(timeout=30)
        refused_after = time.monotonic() - signalled
        threads[0].join(timeout=30)
        interrupted_after = time.monotonic() - signalled
        assert process.wait(timeout=30) in (0, -signal.SIGTERM)
        log = process.stdout.read() if process.stdout else ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    queued = answers["queued-json"]
    assert queued.status_code == 503 and int(queued.headers["retry-after"]) > 0
    assert list(queued.json()) == ["error"] and "before this request started" in queued.json()["error"]
    assert refused_after < GRACE_S  # refused at once, not after the running session's grace period
    status, events = answers["queued-stream"]
    assert status == 200 and events[-1][0] == "error" and events[-1][1]["retry_after"] > 0
    status, events = answers["running"]
    assert status == 200 and [name for name, _ in events][-1] == "error", events
    assert "interrupted" in events[-1][1]["error"]
    assert GRACE_S - 0.5 < interrupted_after < GRACE_S + 5
    session_id = next(data["session_id"] for name, data in events if name == "session_started")
    with AuditStore(private_world, read_only=True) as store:
        assert store.session(session_id)["status"] == "interrupted"
        assert all(not s["query"].endswith("queued-json") for s in store.sessions(limit=20))
    assert "Traceback" not in log and "CancelledError" not in log, log
    assert f"marked interrupted: {session_id}" in log


def test_a_server_killed_with_sigkill_leaves_no_session_running_for_the_next_start(private_world: Path) -> None:
    """systemd sends SIGKILL when the grace runs out: the next process to open the audit marks the session."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = start_process(private_world, port)
    events: list[str] = []

    def stream() -> None:
        with contextlib.suppress(httpx.HTTPError), httpx.stream(
            "POST", f"{url}/v1/diagnoses?stream=true", json={"query": QUERY}, timeout=60
        ) as response:
            events.extend(line for line in response.iter_lines() if "session_id" in line)

    thread = threading.Thread(target=stream)
    try:
        thread.start()
        wait_until(lambda: any('"session_id": "' in line for line in events), timeout=60)
        session_id = json.loads(next(line for line in events if '"session_id": "' in line)[len("data: "):])[
            "session_id"]
        process.kill()
        process.wait()
        thread.join(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    with AuditStore(private_world) as store:
        session = store.session(session_id)
        assert session["status"] == "interrupted" and f"process {process.pid}" in session["error"]
