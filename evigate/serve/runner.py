"""Running the API under uvicorn: address policy, graceful shutdown, and a server a test can start and stop.

Shutdown (SIGTERM / SIGINT, or ``stop()``): the pool stops admitting at once and refuses the requests still
queued (503 with ``Retry-After``, or a final ``error`` event on a stream: they never started a session); running
sessions get ``graceful_s`` to finish, then the pool marks them ``interrupted`` and answers their requests the same
way. uvicorn stops accepting and waits a little longer than ``graceful_s`` (:data:`RESPONSE_MARGIN_S`), so every
response is written before uvicorn would cancel a request (which logs a CancelledError traceback and answers a
plain-text 500); then the app's lifespan closes the pool.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import os
import resource
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

import uvicorn

from evigate.errors import ConfigError
from evigate.serve.app import ServeOptions, create_app
from evigate.serve.limits import HEADER_TIMEOUT_S, MAX_CONNECTIONS
from evigate.serve.protocol import guarded_protocol

TOKEN_ENV = "EVIGATE_API_TOKEN"
RESPONSE_MARGIN_S = 2
"""uvicorn's own grace exceeds the pool's by this much: time to write the answers of interrupted requests."""
ACCEPT_BACKLOG = 128
"""The listen backlog, which is also how many connections asyncio accepts in one go before any of them reaches
the protocol (and its connection cap): uvicorn's 2048 lets a burst of stalling clients take 2048 descriptors at
once (EMFILE), whatever the cap."""
SPARE_DESCRIPTORS = ACCEPT_BACKLOG + 128
"""File descriptors beyond the connections: one accept burst, plus audit files, model files, logs and a model
server's connections."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def check_address(host: str, token: str | None) -> None:
    """Refuse to serve off loopback without a bearer token."""
    if not is_loopback(host) and not token:
        raise ConfigError(
            f"refusing to serve on {host} without authentication: set {TOKEN_ENV} to a secret bearer token, "
            f"or bind to 127.0.0.1"
        )


def uvicorn_config(app: Any, host: str, port: int, graceful_s: float, *, max_connections: int = MAX_CONNECTIONS,
                   header_timeout_s: float = HEADER_TIMEOUT_S) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=guarded_protocol(header_timeout_s, max_connections),  # slow clients: see evigate/serve/protocol.py
        backlog=ACCEPT_BACKLOG,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=math.ceil(graceful_s) + RESPONSE_MARGIN_S,
        lifespan="on",
        server_header=False,
    )


def reserve_descriptors(max_connections: int) -> None:
    """Raise this process's open-file limit to fit ``max_connections`` (up to the hard limit), or refuse to start:
    a server that runs out of descriptors (EMFILE) can no longer accept anyone."""
    needed = max_connections + SPARE_DESCRIPTORS
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            raise ConfigError(
                f"--max-connections {max_connections} needs {needed} open files but the limit is {hard} "
                f"(ulimit -Hn); lower --max-connections to at most {max(1, hard - SPARE_DESCRIPTORS)}"
            )
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def shutdown_hook(pool: Any, graceful_s: float) -> Callable[[], None]:
    """What the server calls the moment shutdown begins: refuse the queue now, interrupt after ``graceful_s``."""
    return lambda: pool.stop_admitting(interrupt_after_s=graceful_s)


class Server(uvicorn.Server):
    """uvicorn's server, telling ``on_exit`` the moment shutdown begins (before it drains requests)."""

    def __init__(self, config: uvicorn.Config, on_exit: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self.on_exit = on_exit

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.on_exit is not None:
            self.on_exit()
        super().handle_exit(sig, frame)


def serve_pool(pool: Any, options: ServeOptions, *, host: str, port: int, graceful_s: float,
               log: Callable[[str], None], max_connections: int = MAX_CONNECTIONS) -> bool:
    """Serve ``pool`` in this (main) thread until SIGTERM / SIGINT: what `evigate serve` runs. False: it could not
    start (uvicorn logged why). The pool's stores are closed once it has shut down."""
    reserve_descriptors(max_connections)

    def stopped(interrupted: list[str]) -> None:
        pool.close()  # uvicorn re-raises SIGTERM once it returns: close the stores now, while we still run
        marked = f"; marked interrupted: {', '.join(interrupted)}" if interrupted else ""
        log(f"evigate serve stopped{marked}")

    app = create_app(pool, dataclasses.replace(options, on_shutdown=stopped))
    config = uvicorn_config(app, host, port, graceful_s, max_connections=max_connections)
    server = Server(config, on_exit=shutdown_hook(pool, graceful_s))
    server.run()
    if server.started and any(
        thread.is_alive() and not thread.daemon for thread in threading.enumerate()
        if thread is not threading.main_thread()
    ):
        # A model call of an interrupted session cannot be cancelled; its session is marked, do not wait for it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return server.started


class ThreadedServer:
    """A real uvicorn server on a thread: ``with ThreadedServer(app, port=p) as server: ... server.url``."""

    def __init__(self, app: Any, *, host: str = "127.0.0.1", port: int, graceful_s: float = 5.0,
                 on_exit: Callable[[], None] | None = None, **limits: Any) -> None:
        """``limits``: ``max_connections``, ``header_timeout_s`` (see :func:`uvicorn_config`)."""
        self.server = Server(uvicorn_config(app, host, port, graceful_s, **limits), on_exit)
        self.server.install_signal_handlers = lambda: None  # type: ignore[method-assign]  # not the main thread
        self.url = f"http://{host}:{port}"
        self._thread = threading.Thread(target=self.server.run, name="evigate-serve-http", daemon=True)

    def start(self, timeout: float = 20.0) -> ThreadedServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on {self.url}")
            time.sleep(0.02)
        return self

    def stop(self, timeout: float = 60.0) -> None:
        """What SIGTERM does: stop admitting, stop accepting, drain requests, run the lifespan shutdown."""
        if self.server.on_exit is not None:
            self.server.on_exit()
        self.server.should_exit = True
        self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return not self._thread.is_alive()

    def __enter__(self) -> ThreadedServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()
