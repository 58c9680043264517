"""Real servers for tests, started on 127.0.0.1 on a free port and stopped after: Prometheus and PostgreSQL 15.

scripts/test.sh installs them (Debian `prometheus`, `postgresql-15`); where a binary is missing the test skips
with the reason. PostgreSQL's initdb refuses root, so it and pg_ctl run as the `postgres` user.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_BIN = Path(os.environ.get("EVIGATE_PG_BIN", "/usr/lib/postgresql/15/bin"))
STARTUP_SECONDS = 60


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_http(url: str, process: subprocess.Popen, log: Path, headers: dict[str, str] | None = None) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}: {log.read_text()[-2000:]}")
        request = urllib.request.Request(url, headers=headers or {})
        with contextlib.suppress(OSError), urllib.request.urlopen(request, timeout=2) as response:
            if response.status == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url} not ready after {STARTUP_SECONDS}s: {log.read_text()[-2000:]}")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _bcrypt(password: str) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import crypt  # the C library's bcrypt; deprecated in Python (gone in 3.13), fine for a test helper
    except ImportError:
        pytest.skip("no bcrypt available for Prometheus' basic-auth web config")
    return crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16))


@contextlib.contextmanager
def prometheus_server(openmetrics: str, workdir: Path, *, basic_auth: tuple[str, str] | None = None
                      ) -> Iterator[str]:
    """A Prometheus holding `openmetrics` (text ending in `# EOF`) as TSDB blocks; yields its base URL.

    With `basic_auth=(user, password)` every endpoint requires those credentials (`--web.config.file`).
    """
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if not prometheus or not promtool:
        pytest.skip("Debian package `prometheus` is not installed (scripts/test.sh installs it)")
    workdir.mkdir(parents=True, exist_ok=True)
    data, source = workdir / "tsdb", workdir / "series.om"
    source.write_text(openmetrics, encoding="utf-8")
    subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(source), str(data)],
                   check=True, capture_output=True, timeout=120)
    config = workdir / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1h\n", encoding="utf-8")
    port = free_port()
    log = workdir / "prometheus.log"
    arguments = [prometheus, f"--config.file={config}", f"--storage.tsdb.path={data}",
                 f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=100y",
                 "--query.lookback-delta=15m"]
    headers = {}
    if basic_auth:
        import base64

        user, password = basic_auth
        web = workdir / "web.yml"
        web.write_text(f"basic_auth_users:\n  {user}: '{_bcrypt(password)}'\n", encoding="utf-8")
        arguments.append(f"--web.config.file={web}")
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    with log.open("wb") as sink:
        process = subprocess.Popen(arguments, stdout=sink, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_http(f"{url}/-/ready", process, log, headers)
        yield url
    finally:
        _stop(process)


@dataclass(frozen=True)
class Postgres:
    host: str
    port: int
    user: str
    password: str
    dbname: str

    @property
    def dsn(self) -> str:
        return f"host={self.host} port={self.port} user={self.user} password={self.password} dbname={self.dbname}"


def _as_postgres(*command: str, timeout: float = 120) -> subprocess.CompletedProcess:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run([*prefix, *command], check=True, capture_output=True, text=True, timeout=timeout)


@contextlib.contextmanager
def postgres_server(password: str = "test-secret") -> Iterator[Postgres]:
    """A fresh PostgreSQL 15 cluster on 127.0.0.1 (scram-sha-256 over TCP); yields how to reach it."""
    if not (PG_BIN / "initdb").exists():
        pytest.skip(f"PostgreSQL 15 server binaries not found in {PG_BIN} (scripts/test.sh installs postgresql-15)")
    root = Path(tempfile.mkdtemp(prefix="evigate-pg-"))
    try:
        if os.geteuid() == 0:
            shutil.chown(root, "postgres", "postgres")
        pwfile = root / "pwfile"
        pwfile.write_text(password + "\n", encoding="utf-8")
        if os.geteuid() == 0:
            shutil.chown(pwfile, "postgres", "postgres")
        data = root / "data"
        _as_postgres(str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres", f"--pwfile={pwfile}",
                     "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8")
        port = free_port()
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        _as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "server.log"),
                     "-w", "-t", str(STARTUP_SECONDS), "start")
        try:
            yield Postgres("127.0.0.1", port, "postgres", password, "postgres")
        finally:
            with contextlib.suppress(subprocess.SubprocessError):
                _as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop", timeout=60)
    finally:
        shutil.rmtree(root, ignore_errors=True)
