"""Slow clients (slowloris): many connections sending incomplete headers one byte at a time neither starve a
legitimate request nor hold connections (file descriptors) past the header deadline or the connection cap.

Bounded: a fixed number of loopback sockets, a fixed time; the test stops by itself."""

from __future__ import annotations

import contextlib
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from evigate.optimize.ui import free_port
from evigate.serve.runner import SPARE_DESCRIPTORS
from tests.serve.conftest import QUERY
from tests.serve.test_serve_shutdown import REPO, wait_for_health

pytestmark = pytest.mark.servers

STALLERS, CAP, HEADER_TIMEOUT_S = 150, 40, 2.0


def open_stalling(host: str, port: int) -> socket.socket | None:
    try:
        sock = socket.create_connection((host, port), timeout=5)
        sock.sendall(b"POST /v1/diagnoses HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # headers never completed
        return sock
    except OSError:  # refused or shed at once: what a capped server may do
        return None


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed the socket (after an optional 408/503 answer in the API's shape)."""
    sock.settimeout(0.05)
    try:
        data = sock.recv(4096)
    except TimeoutError:
        return False
    except OSError:
        return True
    if data:
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.split(b" ")[1] in (b"408", b"503") and body.startswith(b'{"error"'), data
    return True


def test_stalling_connections_are_shed_and_a_legitimate_request_still_gets_in(start_server: Any) -> None:
    server = start_server(max_connections=CAP, header_timeout_s=HEADER_TIMEOUT_S)
    host, port = server.url.removeprefix("http://").split(":")
    state = server.server.server_state
    peak = 0
    stop = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, len(state.connections))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    sockets = [s for s in (open_stalling(host, int(port)) for _ in range(STALLERS)) if s is not None]
    try:
        started = time.monotonic()
        with httpx.Client(base_url=server.url, timeout=10) as client:  # while the stallers are all still there
            response = client.post("/v1/diagnoses", json={"query": QUERY})
            assert response.status_code == 200 and client.get("/healthz").status_code == 200
        assert time.monotonic() - started < 5
        # the stallers trickle a byte a second; the server drops each within the header deadline
        deadline = time.monotonic() + HEADER_TIMEOUT_S + 3
        open_ones = list(sockets)
        while open_ones and time.monotonic() < deadline:
            for sock in open_ones:
                with contextlib.suppress(OSError):
                    sock.send(b"a")
            time.sleep(0.5)
            open_ones = [sock for sock in open_ones if not closed_by_server(sock)]
        assert open_ones == [], f"{len(open_ones)} stalling connections still open after the header deadline"
        assert peak <= CAP + 1  # one over for the moment a newcomer evicts a staller
        assert len(state.connections) <= 1
    finally:
        stop.set()
        watcher.join()
        for sock in sockets:
            sock.close()


def test_a_kept_alive_connection_gets_a_new_header_deadline_for_its_next_request(start_server: Any) -> None:
    server = start_server(header_timeout_s=HEADER_TIMEOUT_S)
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while not first.endswith(b"}"):  # the whole first response (a small JSON object)
            first += sock.recv(4096)
        assert first.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHo")  # the next request stalls mid-headers
        started = time.monotonic()
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 408") and b'{"error"' in answer
        assert time.monotonic() - started < HEADER_TIMEOUT_S + 2


def test_more_stallers_than_descriptors_do_not_exhaust_a_server_process(private_world: Path) -> None:
    """The issue's case (300 stallers made uvicorn log EMFILE): a server process limited to 400 descriptors, 450
    stalling connections, then a legitimate request."""
    port = free_port()
    limit, stallers = 400, 450

    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    command = [sys.executable, "-m", "tests.serve.scripted_server", str(private_world), str(port),
               "--max-connections", str(limit - SPARE_DESCRIPTORS)]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=few_descriptors)
    sockets: list[socket.socket] = []
    try:
        url = wait_for_health(process, port)
        for _ in range(stallers):
            sock = open_stalling("127.0.0.1", port)
            if sock is not None:
                sockets.append(sock)
        started = time.monotonic()
        response = httpx.post(f"{url}/v1/diagnoses", json={"query": QUERY}, timeout=15)
        assert response.status_code == 200 and time.monotonic() - started < 10
    finally:
        for sock in sockets:
            sock.close()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    log = process.stdout.read() if process.stdout else ""
    assert "Too many open files" not in log and "Traceback" not in log, log
