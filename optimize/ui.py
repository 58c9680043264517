"""``evigate ui``: the MLflow UI over evigate's tracking store, bound to 127.0.0.1, stopped with all its workers.

The server runs in its own process group (``start_new_session``), so stopping it signals the whole group: the
uvicorn server and every worker it forked. MLflow's background job runner (huey consumers, five processes here)
is turned off: evigate never submits server-side jobs, and it would only cost memory.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

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
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", self.backend_uri, "--host", HOST,
                "--port", str(self.port), "--workers", str(self.workers)]

    def start(self, timeout: float = 90.0) -> str:
        """Start the server and wait until ``/health`` answers; returns the URL."""
        db = sqlite_path(self.backend_uri)
        if db is not None:
            db.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        output = self.log_file.open("ab") if self.log_file else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen(self.command(), stdout=output, stderr=subprocess.STDOUT, env=env,
                                            start_new_session=True, cwd=str(db.parent) if db else None)
        finally:
            if self.log_file:
                output.close()  # type: ignore[union-attr]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise EvigateError(f"mlflow ui exited with code {self.process.returncode} (see {self.log_file})")
            if self.healthy():
                return self.url
            time.sleep(0.5)
        self.stop()
        raise EvigateError(f"mlflow ui did not answer on {self.url} within {timeout:.0f}s")

    def healthy(self) -> bool:
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

    def __enter__(self) -> MlflowUI:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


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
