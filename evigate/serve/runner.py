"""Running the API under uvicorn: address policy, graceful shutdown, and a server a test can start and stop.

Shutdown (SIGTERM / SIGINT, or ``stop()``): the pool stops admitting at once (requests still queued get 503, they
never started a session), uvicorn stops accepting and waits up to ``graceful_s`` for requests in flight, then the
app's lifespan shuts the pool down — sessions that still run after that are marked ``interrupted``.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

import uvicorn

from evigate.errors import ConfigError

TOKEN_ENV = "EVIGATE_API_TOKEN"


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


def uvicorn_config(app: Any, host: str, port: int, graceful_s: float) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=max(1, round(graceful_s)),
        lifespan="on",
        server_header=False,
    )


class Server(uvicorn.Server):
    """uvicorn's server, telling ``on_exit`` the moment shutdown begins (before it drains requests)."""

    def __init__(self, config: uvicorn.Config, on_exit: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self.on_exit = on_exit

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.on_exit is not None:
            self.on_exit()
        super().handle_exit(sig, frame)


class ThreadedServer:
    """A real uvicorn server on a thread: ``with ThreadedServer(app, port=p) as server: ... server.url``."""

    def __init__(self, app: Any, *, host: str = "127.0.0.1", port: int, graceful_s: float = 5.0,
                 on_exit: Callable[[], None] | None = None) -> None:
        self.server = Server(uvicorn_config(app, host, port, graceful_s), on_exit)
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
