"""``evigate ui``: the MLflow UI over evigate's tracking store, bound to 127.0.0.1, stopped with all its workers.

The server runs in its own process group (``start_new_session``), so stopping it signals the whole group: the
uvicorn server and every worker it forked. Being in its own session, it gets no SIGHUP when the terminal goes
away, so :func:`stop_on_signals` turns SIGHUP and SIGTERM into a clean stop of the launcher. MLflow's background
job runner (huey consumers, five processes here) is turned off: evigate never submits server-side jobs.

``start`` refuses a port something else already listens on: ``/health`` answering there would be another
server's, not ours. Its output goes to ``log_file`` or a temporary log, quoted when the server exits early.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType, TracebackType

from evigate.errors import ConfigError, EvigateError
from evigate.optimize.tracking import sqlite_path, tracking_uri

HOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class MlflowUI:
    """A managed ``mlflow ui`` process: ``with MlflowUI(uri) as ui: ... ui.url``."""

    def __init__(self, backend_uri: str | None = None, *, port: int = 5000, workers: int = 1,
                 log_file: str | Path | None = None) -> None:
        self.backend_uri = backend_uri or tracking_uri()
        if self.backend_uri.startswith(("http://", "https://")):
            raise ConfigError(f"MLFLOW_TRACKING_URI points at a server ({self.backend_uri}); open it directly")
        self.port = port or free_port()
        self.workers = workers
        self.log_file = Path(log_file) if log_file else None
        self._own_log = log_file is None  # a temporary log, removed by stop() unless it explains a failure
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", self.backend_uri, "--host", HOST,
                "--port", str(self.port), "--workers", str(self.workers)]

    def start(self, timeout: float = 90.0) -> str:
        """Start the server and wait until ``/health`` answers; returns the URL."""
        if port_in_use(self.port):
            raise EvigateError(
                f"port {self.port} on {HOST} is already in use by another process; stop it or choose --port 0"
            )
        db = sqlite_path(self.backend_uri)
        if db is not None:
            db.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        if self.log_file is None:
            handle, name = tempfile.mkstemp(prefix="evigate-mlflow-ui-", suffix=".log")
            os.close(handle)
            self.log_file = Path(name)
        with self.log_file.open("ab") as output:
            self.process = subprocess.Popen(self.command(), stdout=output, stderr=subprocess.STDOUT, env=env,
                                            start_new_session=True, cwd=str(db.parent) if db else None)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._own_log = False  # keep the log the message points at
                raise EvigateError(f"mlflow ui exited with code {self.process.returncode}: {self.log_tail()} "
                                   f"(full log: {self.log_file})")
            if self.healthy():
                return self.url
            time.sleep(0.5)
        self.stop()
        raise EvigateError(f"mlflow ui did not answer on {self.url} within {timeout:.0f}s (log: {self.log_file})")

    def log_tail(self, lines: int = 5) -> str:
        """The last lines the server wrote, on one line."""
        try:
            text = self.log_file.read_text(encoding="utf-8", errors="replace") if self.log_file else ""
        except OSError:
            return "(no output)"
        tail = [line.strip() for line in text.strip().splitlines()[-lines:] if line.strip()]
        return " | ".join(tail) or "(no output)"

    def healthy(self) -> bool:
        """Whether *our* server answers: its process is alive and ``/health`` returns 200."""
        if self.process is None or self.process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def group_alive(self) -> bool:
        """Whether any process of the server's process group is still running (zombies do not count)."""
        if self.process is None:
            return False
        return bool(group_members(self.process.pid))

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM the whole process group, then SIGKILL what is left after ``timeout``."""
        if self.process is None:
            return
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and self.group_alive():
                self.process.poll()  # reap the leader so it does not linger as a zombie
                time.sleep(0.1)
            if not self.group_alive():
                break
        self.process.poll()
        if self._own_log and self.log_file is not None:
            self.log_file.unlink(missing_ok=True)

    def __enter__(self) -> MlflowUI:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def port_in_use(port: int) -> bool:
    """Whether something already accepts connections on 127.0.0.1:``port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex((HOST, port)) == 0


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Inside: SIGTERM and SIGHUP raise KeyboardInterrupt, so the launcher's ``finally`` stops the server.

    The server runs in a session of its own and never sees the terminal's hangup; without this, closing the
    terminal (SIGHUP's default action kills the launcher) left it running, holding the port.
    """
    def interrupt(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    wanted = [signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    previous = {sig: signal.signal(sig, interrupt) for sig in wanted}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) pids of a process group, read from /proc; falls back to a signal probe elsewhere."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        return [pgid]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # fields after the parenthesised command: state, ppid, pgrp, ...
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members
