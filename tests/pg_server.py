"""A real PostgreSQL 15 for the tests: initdb into a temp dir, started on a free 127.0.0.1 port, stopped after.

initdb refuses to run as root, so the cluster belongs to the ``postgres`` user and every server command runs
through ``runuser -u postgres --``. Password authentication (scram-sha-256) is on, so the tests exercise
credentials the way a team's server would ask for them. ``scripts/test.sh`` installs ``postgresql-15`` when the
binaries are missing; without them the tests that need the server are skipped with that reason.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_BIN = Path(os.environ.get("EVIGATE_PG_BIN", "/usr/lib/postgresql/15/bin"))
SUPERUSER_PASSWORD = "pg-superuser-" + uuid.uuid4().hex[:8]
USER, PASSWORD, DATABASE = "evigate", "evigate-" + uuid.uuid4().hex[:12], "evigate"


@dataclass(frozen=True)
class PgServer:
    """A running server: ``url`` carries the evigate role's password, ``url_without_password`` does not."""

    host: str
    port: int
    startup_seconds: float

    @property
    def url(self) -> str:
        return f"postgresql://{USER}:{PASSWORD}@{self.host}:{self.port}/{DATABASE}"

    @property
    def url_without_password(self) -> str:
        return f"postgresql://{USER}@{self.host}:{self.port}/{DATABASE}"

    @property
    def password(self) -> str:
        return PASSWORD

    def fresh_schema_url(self) -> str:
        """The URL of an empty schema of its own (a test's private audit database, on the same server)."""
        import psycopg

        schema = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url, autocommit=True) as connection:
            connection.execute(f'CREATE SCHEMA "{schema}"')  # a generated identifier, never user input
        return f"{self.url}?options=-csearch_path%3D{schema}"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_postgres(*command: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["runuser", "-u", "postgres", "--", *map(str, command)], capture_output=True, text=True, timeout=timeout,
        check=True,
    )  # fmt: skip


def start_pg_server() -> tuple[PgServer, Path]:
    """initdb + pg_ctl start; returns the server and its directory (pass it to :func:`stop_pg_server`)."""
    if not (PG_BIN / "initdb").exists():
        pytest.skip(f"PostgreSQL 15 is not installed ({PG_BIN}/initdb missing; scripts/test.sh installs it)")
    try:
        account = pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("no 'postgres' system user to own the test cluster")
    started = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="evigate-pg-"))
    os.chown(base, account.pw_uid, account.pw_gid)
    pwfile = base / "pwfile"
    pwfile.write_text(SUPERUSER_PASSWORD + "\n", encoding="utf-8")
    os.chown(pwfile, account.pw_uid, account.pw_gid)
    data = base / "data"
    _as_postgres(PG_BIN / "initdb", "-D", data, "-U", "postgres", "--auth=scram-sha-256", f"--pwfile={pwfile}",
                 "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")  # fmt: skip
    port = _free_port()
    options = f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories='' -c fsync=off"
    _as_postgres(PG_BIN / "pg_ctl", "-D", data, "-l", base / "server.log", "-o", options, "-w", "-t", "60", "start")
    import psycopg

    admin = f"postgresql://postgres:{SUPERUSER_PASSWORD}@127.0.0.1:{port}/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'")  # generated, quote-free values
        connection.execute(f"CREATE DATABASE {DATABASE} OWNER {USER}")
    return PgServer("127.0.0.1", port, time.monotonic() - started), base


def stop_pg_server(base: Path) -> None:
    try:
        _as_postgres(PG_BIN / "pg_ctl", "-D", base / "data", "-m", "fast", "-w", "stop", timeout=60)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One PostgreSQL 15 for the test session; tests isolate themselves with :meth:`PgServer.fresh_schema_url`."""
    server, base = start_pg_server()
    try:
        yield server
    finally:
        stop_pg_server(base)
