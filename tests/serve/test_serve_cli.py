"""The real `evigate serve` process: starts on loopback, enforces its token, stops cleanly on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from evigate.optimize.ui import free_port


def test_evigate_serve_process_answers_health_enforces_the_token_and_stops_on_sigterm(private_world: Path) -> None:
    port = free_port()
    env = {**os.environ, "EVIGATE_DATABASE": str(private_world), "EVIGATE_API_TOKEN": "tok"}
    server = subprocess.Popen(
        [sys.executable, "-m", "evigate.cli", "serve", "--port", str(port), "--host", "127.0.0.1"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, server.stdout.read() if server.stdout else ""
            try:
                health = httpx.get(f"{url}/healthz", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "evigate serve did not come up"
                time.sleep(0.3)
        assert health.json() == {"status": "ok", "running": 0, "queued": 0, "capacity": 9}
        # refused before any model runs: no token, then a body over the limit
        assert httpx.post(f"{url}/v1/diagnoses", json={"query": "订单 123"}, timeout=5).status_code == 401
        assert httpx.post(f"{url}/v1/diagnoses", content=b"x" * 60_000, timeout=5,
                          headers={"Authorization": "Bearer tok"}).status_code == 413
        server.send_signal(signal.SIGTERM)
        # uvicorn re-raises the SIGTERM it handled once shutdown is done, so a supervisor sees the signal exit
        assert server.wait(timeout=30) in (0, -signal.SIGTERM)
        output = server.stdout.read() if server.stdout else ""
        assert "Traceback" not in output and "bearer token required" in output
        assert "evigate serve stopped" in output
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
