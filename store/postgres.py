"""The PostgreSQL backend (psycopg 3): a team's one audit database behind several evigate workers.

Connections come from the URL (``postgresql://user:password@host:port/db?sslmode=...``) and libpq's environment
(``PGPASSWORD``, ``PGPASSFILE``, ``PGSSLMODE``, …); neither the password nor the URL holding it is ever written
into the audit or an error message (:func:`redact_url`). Each statement autocommits on a pooled connection, so
any number of threads and processes write at once; PostgreSQL's row locks keep the self_evaluation slot merge
atomic. Migrations take an advisory lock, so workers starting together apply them once.

The demo world's tables are DuckDB SQL: with this backend they live in a private in-memory DuckDB database of
the store (built deterministically on first use, identical in every worker), reached through ``cursor()``.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evigate.errors import AuditValueError, SessionNotFoundError, StoreError
from evigate.redaction import redact_secrets, redact_url
from evigate.store import pg_sql
from evigate.store.codec import rows_to_dicts
from evigate.store.duck import DuckDBBackend, LeasedCursor
from evigate.store.migrate import check_compatible, load_migrations

URL_SCHEMES = ("postgresql://", "postgres://")
CONNECT_TIMEOUT_SECONDS = 10
MAX_IDLE_CONNECTIONS = 8
_MIGRATION_LOCK_KEY = 0x65766967  # "evig": one advisory lock id for every evigate migration

_CREATE_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_version (
    version     INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    applied_at  TIMESTAMP NOT NULL
)
"""


def is_postgres_url(location: str) -> bool:
    """Whether ``location`` names a PostgreSQL database rather than a DuckDB file."""
    return location.strip().lower().startswith(URL_SCHEMES)


class PostgresBackend:
    """The audit tables in one PostgreSQL database (the schema on the URL's ``search_path``)."""

    dialect = pg_sql

    def __init__(self, url: str, *, read_only: bool) -> None:
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - psycopg is a dependency
            raise StoreError("PostgreSQL audit stores need psycopg: pip install 'psycopg[binary]'") from exc
        self._psycopg = psycopg
        self._url, self.read_only = url, read_only
        self.location = redact_url(url)
        self.path = Path(self.location)
        self._idle: list[Any] = []
        self._pid = os.getpid()
        self._pool_lock = threading.Lock()
        self._closed = False
        self._world: DuckDBBackend | None = None
        self._world_lock = threading.Lock()
        with self._connection() as connection:
            if read_only:
                self._require_current(connection)
            else:
                self._migrate(connection)

    # -- connections -----------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        connection = self._take()
        healthy = False
        try:
            yield connection
            healthy = True
        finally:
            self._give_back(connection, healthy)

    def _take(self) -> Any:
        with self._pool_lock:
            if self._closed:
                raise StoreError(f"audit store {self.location} is closed")
            if self._pid != os.getpid():
                # Connections inherited over fork belong to the parent: closing them would end its sessions.
                self._idle, self._pid = [], os.getpid()
            while self._idle:
                connection = self._idle.pop()
                if not connection.closed and not connection.broken:
                    return connection
        try:
            connection = self._psycopg.connect(self._url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
        except self._psycopg.Error as exc:
            raise StoreError(f"cannot connect to audit database {self.location}: {redact_secrets(str(exc))}") from None
        if self.read_only:
            connection.execute("SET default_transaction_read_only = on")
        return connection

    def _give_back(self, connection: Any, healthy: bool) -> None:
        idle = self._psycopg.pq.TransactionStatus.IDLE
        reusable = healthy or (not connection.broken and connection.info.transaction_status == idle)
        with self._pool_lock:
            if reusable and not self._closed and not connection.closed and len(self._idle) < MAX_IDLE_CONNECTIONS:
                self._idle.append(connection)
                return
        with contextlib.suppress(self._psycopg.Error):
            connection.close()

    def close(self) -> None:
        with self._pool_lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            with contextlib.suppress(self._psycopg.Error):
                connection.close()
        if self._world is not None:
            self._world.close()

    # -- the demo world's DuckDB -----------------------------------------------------------------------------
    def cursor(self) -> LeasedCursor:
        with self._world_lock:
            if self._world is None:
                self._world = DuckDBBackend(Path(":memory:"), read_only=False, audit=False)
        return self._world.cursor()

    # -- statements --------------------------------------------------------------------------------------------
    def read(self, statement: str, params: list[Any], json_columns: dict) -> list[dict[str, Any]]:
        with self._connection() as connection:
            try:
                result = connection.execute(statement, params)
                columns = [column.name for column in result.description]
                return rows_to_dicts(columns, result.fetchall(), json_columns)
            except self._psycopg.Error as exc:
                raise self._error(exc, "") from exc

    def write(
        self, statement: str, params: list[Any], *, session_id: str, lock: contextlib.AbstractContextManager | None
    ) -> list[tuple[Any, ...]]:
        if self.read_only:
            raise StoreError(f"audit store {self.location} is read-only")
        with self._connection() as connection:
            try:
                result = connection.execute(statement, params)
                return result.fetchall() if result.description is not None else [(result.rowcount,)]
            except self._psycopg.Error as exc:
                raise self._error(exc, session_id) from exc

    def _error(self, exc: Exception, session_id: str) -> StoreError | AuditValueError:
        errors = self._psycopg.errors
        message = redact_secrets(str(exc).strip())
        where = self.location
        if isinstance(exc, errors.ForeignKeyViolation):
            return SessionNotFoundError(f"no diagnosis session {session_id!r} in {where}: {message}")
        if isinstance(exc, errors.UniqueViolation):
            return AuditValueError(f"diagnosis session {session_id!r} already exists in {where}")
        if isinstance(exc, errors.ReadOnlySqlTransaction):
            return StoreError(f"audit store {where} is read-only: {message}")
        if isinstance(exc, self._psycopg.IntegrityError | self._psycopg.DataError):
            return AuditValueError(f"value rejected by {where}: {message}")
        if isinstance(exc, self._psycopg.OperationalError):
            return StoreError(f"audit database {where} is unavailable: {message}")
        return StoreError(f"audit database {where}: {message}")

    # -- migrations --------------------------------------------------------------------------------------------
    def _migrate(self, connection: Any) -> list[int]:
        migrations = load_migrations(dialect="postgresql")
        try:
            with connection.transaction():
                # Serialises workers that start together; released with the transaction.
                connection.execute("SELECT pg_advisory_xact_lock(%s)", [_MIGRATION_LOCK_KEY])
                connection.execute(_CREATE_VERSION_TABLE)
                applied = dict(connection.execute("SELECT version, name FROM schema_version").fetchall())
                pending = check_compatible(applied, migrations, self.path)
                for migration in pending:
                    connection.execute(migration.sql)
                    connection.execute(
                        "INSERT INTO schema_version (version, name, applied_at) VALUES (%s, %s, %s)",
                        [migration.version, migration.name, datetime.now(UTC).replace(tzinfo=None)],
                    )
        except self._psycopg.Error as exc:
            message = redact_secrets(str(exc))
            raise StoreError(f"audit database {self.location}: schema migration failed: {message}") from None
        return [migration.version for migration in pending]

    def _require_current(self, connection: Any) -> None:
        migrations = load_migrations(dialect="postgresql")
        try:
            exists = connection.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()[0]
            applied = dict(connection.execute("SELECT version, name FROM schema_version").fetchall()) if exists else {}
        except self._psycopg.Error as exc:
            raise self._error(exc, "") from exc
        pending = check_compatible(applied, migrations, self.path)
        if pending:
            raise StoreError(
                f"audit database {self.location} lacks schema migrations {[m.version for m in pending]} and is "
                "opened read-only; open it once read-write to migrate it"
            )
