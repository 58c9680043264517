"""Versioned schema migrations: ``migrations/NNNN_name.sql`` applied in order, recorded in ``schema_version``.

Each migration runs in its own transaction together with the row that records it, so a failed migration leaves
neither half a schema nor a version claiming it ran. Re-running on an up-to-date database changes nothing.
"""

from __future__ import annotations

import contextlib
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import duckdb

from evigate.errors import StoreError

_FILE_NAME = re.compile(r"^(?P<version>\d{4})_(?P<name>[a-z0-9_]+)\.sql$")

# Stores opened on the same file in one process share one DuckDB instance; this keeps their migrations serial.
_MIGRATION_LOCK = threading.Lock()

_CREATE_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_version (
    version     INTEGER PRIMARY KEY,
    name        VARCHAR NOT NULL,
    applied_at  TIMESTAMP NOT NULL
)
"""


@dataclass(frozen=True)
class Migration:
    """One schema step: its number, its name and the DDL it runs."""

    version: int
    name: str
    sql: str


DIALECT_FOLDERS = {"duckdb": None, "postgresql": "postgresql"}
"""Where each backend's migrations live under ``migrations/``: the same versions and names, each in its SQL."""


def load_migrations(directory: Traversable | Path | None = None, *, dialect: str = "duckdb") -> tuple[Migration, ...]:
    """Read the migration files of ``directory`` (default: the shipped ones of ``dialect``), numbered 1..n."""
    folder = directory if directory is not None else _shipped(dialect)
    migrations = []
    for entry in folder.iterdir():
        match = _FILE_NAME.match(entry.name)
        if match:
            migrations.append(Migration(int(match["version"]), match["name"], entry.read_text(encoding="utf-8")))
    migrations.sort(key=lambda migration: migration.version)
    expected = list(range(1, len(migrations) + 1))
    found = [migration.version for migration in migrations]
    if found != expected:
        raise StoreError(f"schema migrations in {folder} must be numbered 0001..{len(found):04d} without gaps: {found}")
    return tuple(migrations)


def _shipped(dialect: str) -> Traversable:
    if dialect not in DIALECT_FOLDERS:
        raise StoreError(f"no schema migrations for database dialect {dialect!r}; known: {list(DIALECT_FOLDERS)}")
    folder = resources.files("evigate.store.migrations")
    subfolder = DIALECT_FOLDERS[dialect]
    return folder if subfolder is None else folder / subfolder


def applied_versions(cursor: duckdb.DuckDBPyConnection) -> dict[int, str]:
    """Version → name of every migration recorded in the database ({} if it has no ``schema_version`` table)."""
    exists = cursor.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'schema_version' AND schema_name = 'main'"
    ).fetchone()
    if not exists or exists[0] == 0:
        return {}
    return dict(cursor.execute("SELECT version, name FROM schema_version ORDER BY version").fetchall())


def check_compatible(applied: dict[int, str], migrations: tuple[Migration, ...], path: Path) -> list[Migration]:
    """The migrations still to apply; raise if the database is newer than this code or its history differs."""
    latest = migrations[-1].version if migrations else 0
    newer = [version for version in applied if version > latest]
    if newer:
        raise StoreError(
            f"audit database {path} has schema version {max(newer)}, newer than this evigate knows ({latest}); "
            "upgrade evigate or use another file"
        )
    for migration in migrations:
        recorded = applied.get(migration.version)
        if recorded is not None and recorded != migration.name:
            raise StoreError(
                f"audit database {path} recorded migration {migration.version:04d} as {recorded!r}, "
                f"but this evigate ships {migration.name!r}; the file comes from an incompatible build"
            )
    return [migration for migration in migrations if migration.version not in applied]


def migrate(
    connection: duckdb.DuckDBPyConnection, path: Path, migrations: tuple[Migration, ...] | None = None
) -> list[int]:
    """Bring the database up to date; return the versions applied now ([] when it already was)."""
    migrations = load_migrations() if migrations is None else migrations
    with _MIGRATION_LOCK, connection.cursor() as cursor:
        cursor.execute(_CREATE_VERSION_TABLE)
        pending = check_compatible(applied_versions(cursor), migrations, path)
        for migration in pending:
            _apply(cursor, migration, path)
        return [migration.version for migration in pending]


def require_current(
    connection: duckdb.DuckDBPyConnection, path: Path, migrations: tuple[Migration, ...] | None = None
) -> None:
    """For read-only stores: raise unless the database already has every migration (it cannot be migrated)."""
    migrations = load_migrations() if migrations is None else migrations
    with connection.cursor() as cursor:
        pending = check_compatible(applied_versions(cursor), migrations, path)
    if pending:
        raise StoreError(
            f"audit database {path} lacks schema migrations {[m.version for m in pending]} and is opened "
            "read-only; open it once read-write to migrate it"
        )


def _apply(cursor: duckdb.DuckDBPyConnection, migration: Migration, path: Path) -> None:
    cursor.execute("BEGIN TRANSACTION")
    try:
        cursor.execute(migration.sql)
        cursor.execute(
            "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
            [migration.version, migration.name, datetime.now(UTC).replace(tzinfo=None)],
        )
        cursor.execute("COMMIT")
    except duckdb.Error as exc:
        # A failed COMMIT has already ended the transaction; only roll back one that is still open.
        with contextlib.suppress(duckdb.Error):
            cursor.execute("ROLLBACK")
        raise StoreError(
            f"audit database {path}: schema migration {migration.version:04d}_{migration.name} failed: {exc}"
        ) from exc
