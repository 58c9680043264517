"""Real servers for tests, started on 127.0.0.1 on a free port and stopped after: Prometheus and PostgreSQL 15.

One set of process helpers (a free port, a process that is always stopped, waiting until it serves HTTP) and one
PostgreSQL cluster helper back every server fixture: the connector tests, the audit-store tests (`pg_server`) and
the model-server tests (tests/model_server/llama_server.py). scripts/test.sh installs the binaries (Debian
`prometheus`, `postgresql-15`); where one is missing the test skips with the reason. PostgreSQL's initdb refuses
root, so as root it and pg_ctl run as the `postgres` user (`runuser -u postgres --`).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_BIN = Path(os.environ.get("EVIGATE_PG_BIN", "/usr/lib/postgresql/15/bin"))
STARTUP_SECONDS = 60


# --- processes -------------------------------------------------------------------------------------------------


def free_port() -> int:
    """A 127.0.0.1 port nobody listens on (also a port that refuses connections, for failure tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_process(process: subprocess.Popen) -> None:
    """Terminate, then kill if it will not go; a process that already exited is left as it is."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@contextlib.contextmanager
def running(command: Sequence[str], log: Path, **popen: object) -> Iterator[subprocess.Popen]:
    """Run `command` with its output in `log`; the process is stopped on exit, whatever happened."""
    with log.open("wb") as sink:
        process = subprocess.Popen(list(command), stdout=sink, stderr=subprocess.STDOUT, **popen)  # type: ignore[call-overload]
    try:
        yield process
    finally:
        stop_process(process)


def wait_http(url: str, process: subprocess.Popen, log: Path, headers: dict[str, str] | None = None, *,
              seconds: float = STARTUP_SECONDS, ready: Callable[[bytes], bool] = lambda body: True,
              name: str = "server") -> None:
    """Wait until `url` answers 200 with a body `ready` accepts; the log's tail explains a failure."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}: {_tail(log)}")
        request = urllib.request.Request(url, headers=headers or {})
        with contextlib.suppress(OSError, ValueError), urllib.request.urlopen(request, timeout=2) as response:
            if response.status == 200 and ready(response.read()):
                return
        time.sleep(0.2)
    raise RuntimeError(f"{name}: {url} not ready after {seconds}s: {_tail(log)}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:]


# --- Prometheus ------------------------------------------------------------------------------------------------


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
    with running(arguments, log) as process:
        url = f"http://127.0.0.1:{port}"
        wait_http(f"{url}/-/ready", process, log, headers, name="prometheus")
        yield url


# --- PostgreSQL ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Postgres:
    """How to reach a running cluster as one role (the superuser `postgres` for :func:`postgres_server`)."""

    host: str
    port: int
    user: str
    password: str
    dbname: str

    @property
    def dsn(self) -> str:
        return f"host={self.host} port={self.port} user={self.user} password={self.password} dbname={self.dbname}"

    @property
    def url(self) -> str:
        return f"postgresql://{self.user}:{self.password}@{self.host}:{self.port}/{self.dbname}"


def _as_postgres(*command: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run([*prefix, *map(str, command)], check=True, capture_output=True, text=True, timeout=timeout)


def _give_to_postgres(path: Path) -> None:
    if os.geteuid() == 0:
        account = pwd.getpwnam("postgres")
        os.chown(path, account.pw_uid, account.pw_gid)


@contextlib.contextmanager
def postgres_server(password: str = "test-secret") -> Iterator[Postgres]:
    """A fresh PostgreSQL 15 cluster on 127.0.0.1 (scram-sha-256 over TCP only); yields how to reach it."""
    if not (PG_BIN / "initdb").exists():
        pytest.skip(f"PostgreSQL 15 server binaries not found in {PG_BIN} (scripts/test.sh installs postgresql-15)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("no 'postgres' system user to own the test cluster")
    root = Path(tempfile.mkdtemp(prefix="evigate-pg-"))
    try:
        _give_to_postgres(root)
        pwfile = root / "pwfile"
        pwfile.write_text(password + "\n", encoding="utf-8")
        _give_to_postgres(pwfile)
        data = root / "data"
        _as_postgres(PG_BIN / "initdb", "-D", data, "-U", "postgres", f"--pwfile={pwfile}", "--auth=scram-sha-256",
                     "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
        port = free_port()
        options = f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off"
        _as_postgres(PG_BIN / "pg_ctl", "-D", data, "-o", options, "-l", root / "server.log",
                     "-w", "-t", str(STARTUP_SECONDS), "start")
        try:
            yield Postgres("127.0.0.1", port, "postgres", password, "postgres")
        finally:
            with contextlib.suppress(subprocess.SubprocessError):
                _as_postgres(PG_BIN / "pg_ctl", "-D", data, "-m", "fast", "-w", "stop", timeout=60)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@dataclass(frozen=True)
class PgServer:
    """The audit-store tests' server: ``url`` carries the evigate role's password, ``url_without_password`` not."""

    host: str
    port: int
    startup_seconds: float
    user: str = "evigate"
    password: str = ""
    database: str = "evigate"

    @property
    def url(self) -> str:
        return f"postgresql://{self.user}:{self.password}@{self.host}:{self.port}/{self.database}"

    @property
    def url_without_password(self) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{self.database}"

    def fresh_schema_url(self) -> str:
        """The URL of an empty schema of its own (a test's private audit database, on the same server)."""
        import psycopg

        schema = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url, autocommit=True) as connection:
            connection.execute(f'CREATE SCHEMA "{schema}"')  # a generated identifier, never user input
        return f"{self.url}?options=-csearch_path%3D{schema}"


@contextlib.contextmanager
def audit_pg_server() -> Iterator[PgServer]:
    """A fresh cluster with a non-superuser `evigate` role owning database `evigate` (what a team's server gives)."""
    import psycopg

    started = time.monotonic()
    with postgres_server("pg-superuser-" + uuid.uuid4().hex[:8]) as admin:
        password = "evigate-" + uuid.uuid4().hex[:12]
        with psycopg.connect(admin.url, autocommit=True) as connection:
            connection.execute(f"CREATE ROLE evigate LOGIN PASSWORD '{password}'")  # generated, quote-free values
            connection.execute("CREATE DATABASE evigate OWNER evigate")
        yield PgServer(admin.host, admin.port, time.monotonic() - started, password=password)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One PostgreSQL 15 for the test session; tests isolate themselves with :meth:`PgServer.fresh_schema_url`."""
    with audit_pg_server() as server:
        yield server
