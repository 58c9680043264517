"""Slow clients against a real `evigate serve` process: does a legitimate request get through, and how many
descriptors does the server hold? (scripted agents, no model)

What it does: starts the server process (tests/serve/scripted_server.py: what `evigate serve` runs, scripted
agents) with its open-file limit set to ``--fd-limit`` and ``--max-connections`` what that limit fits, opens
``--stallers`` loopback connections that send an incomplete request head and then one byte every ``--trickle``
seconds (slowloris), and meanwhile sends legitimate requests one after another. It prints the legitimate
requests' latency, the server's open descriptors (sampled from /proc), how long the stallers held on, and the
EMFILE lines in the server's log.

Rerun:  .venv/bin/python bench/serve_slow_clients.py [--stallers 450] [--fd-limit 400] [--seconds 15]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.serve: the scripted server process

from evigate.demo import ensure_world
from evigate.optimize.ui import free_port
from evigate.serve.limits import HEADER_TIMEOUT_S
from evigate.serve.runner import SPARE_DESCRIPTORS
from evigate.store import AuditStore
from tests.serve.conftest import QUERY

REPO = Path(__file__).resolve().parents[1]


def open_staller(port: int) -> socket.socket | None:
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(b"POST /v1/diagnoses HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        return sock
    except OSError:
        return None


def descriptors(pid: int) -> int:
    with contextlib.suppress(OSError):
        return len(os.listdir(f"/proc/{pid}/fd"))
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stallers", type=int, default=450)
    parser.add_argument("--fd-limit", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=15.0, help="how long legitimate requests are sent")
    parser.add_argument("--trickle", type=float, default=1.0, help="seconds between a staller's bytes")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="evigate-bench-slow-"))
    database, port, log = workdir / "evigate.duckdb", free_port(), workdir / "server.log"
    with AuditStore(database) as store:
        ensure_world(store)
    max_connections = args.fd_limit - SPARE_DESCRIPTORS

    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (args.fd_limit, args.fd_limit))

    command = [sys.executable, "-m", "tests.serve.scripted_server", str(database), str(port),
               "--max-connections", str(max_connections)]
    with log.open("w") as output:
        process = subprocess.Popen(command, cwd=REPO, stdout=output, stderr=subprocess.STDOUT,
                                   preexec_fn=few_descriptors)
    url = f"http://127.0.0.1:{port}"
    stop = threading.Event()
    peak = [0]
    stallers: list[tuple[socket.socket, float]] = []
    held: list[float] = []
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                httpx.get(f"{url}/healthz", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit(f"the server did not start:\n{log.read_text()}") from None
                time.sleep(0.3)

        def sample() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], descriptors(process.pid))
                time.sleep(0.02)

        def trickle() -> None:
            while not stop.is_set():
                for sock, opened in list(stallers):
                    try:
                        sock.send(b"a")
                    except OSError:
                        held.append(time.monotonic() - opened)
                        stallers.remove((sock, opened))
                stop.wait(args.trickle)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        opened_at = time.monotonic()
        for _ in range(args.stallers):
            sock = open_staller(port)
            if sock is not None:
                stallers.append((sock, time.monotonic()))
        accepted, opening_s = len(stallers), time.monotonic() - opened_at
        threading.Thread(target=trickle, daemon=True).start()
        latencies, failures = [], 0
        end = time.monotonic() + args.seconds
        with httpx.Client(base_url=url, timeout=30) as client:
            while time.monotonic() < end:
                started = time.perf_counter()
                try:
                    ok = client.post("/v1/diagnoses", json={"query": QUERY}).status_code == 200
                except httpx.HTTPError:
                    ok = False
                if ok:
                    latencies.append((time.perf_counter() - started) * 1000)
                failures += not ok
    finally:
        stop.set()
        for sock, _ in stallers:
            sock.close()
        process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=30)
        if process.poll() is None:
            process.kill()
        emfile = log.read_text(errors="replace").count("Too many open files")
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"evigate serve (scripted agents) · open-file limit {args.fd_limit} · --max-connections "
          f"{max_connections} · header deadline {HEADER_TIMEOUT_S:g} s")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"stallers: {accepted}/{args.stallers} connected in {opening_s:.1f} s, one byte every {args.trickle:g} s; "
          f"{len(held)} shed by the server, held {statistics.median(held) if held else float('nan'):.1f} s "
          f"(median), {max(held) if held else float('nan'):.1f} s (max)")
    if latencies:
        print(f"legitimate requests: {len(latencies)} answered 200, {failures} failed; ms p50 "
              f"{statistics.median(latencies):.0f}, max {max(latencies):.0f}")
    else:
        print(f"legitimate requests: none answered, {failures} failed")
    print(f"server descriptors: peak {peak[0]} of {args.fd_limit}; EMFILE lines in its log: {emfile}")


if __name__ == "__main__":
    main()
