"""Opening a DuckDB file for evigate and turning DuckDB's failures into evigate errors that name the file."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from evigate.errors import DatabaseCorruptError, DatabaseLockedError, StoreError

IN_MEMORY = ":memory:"
"""The path that opens a private in-memory database (handy for tests; shared by the store's cursors only)."""

CONNECT_CONFIG: dict[str, str | bool] = {
    # The JSON functions the store uses are statically linked into the duckdb wheel. Forbidding extension
    # install/autoload guarantees nothing is ever fetched from the network, even by a stray query.
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}

_LOCK_MARKERS = ("could not set lock",)
_CORRUPT_MARKERS = ("not a valid duckdb database file", "corrupt database file", "checksum")


def normalise_path(path: str | os.PathLike[str]) -> Path:
    """The absolute path of a database file (or ``Path(":memory:")``), so messages and comparisons agree."""
    if os.fspath(path) == IN_MEMORY:
        return Path(IN_MEMORY)
    return Path(path).expanduser().resolve()


def open_connection(path: Path, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Connect to ``path`` with extensions locked down; raise a :class:`StoreError` subclass naming the file."""
    if str(path) != IN_MEMORY:
        if read_only and not path.exists():
            raise StoreError(f"cannot open audit database {path} read-only: the file does not exist")
        if not path.parent.is_dir():
            raise StoreError(f"cannot create audit database {path}: directory {path.parent} does not exist")
    try:
        return duckdb.connect(str(path), read_only=read_only, config=dict(CONNECT_CONFIG))
    except duckdb.Error as exc:
        raise translate_error(exc, path) from exc


def translate_error(exc: duckdb.Error, path: Path) -> StoreError:
    """Map a DuckDB error to the evigate error that tells the user what is wrong with ``path``."""
    message = str(exc)
    lowered = message.lower()
    if any(marker in lowered for marker in _LOCK_MARKERS):
        return DatabaseLockedError(
            f"audit database {path} is locked by another process (DuckDB allows one writing process per file; "
            f"close the other evigate process or use another file): {message}"
        )
    if any(marker in lowered for marker in _CORRUPT_MARKERS):
        return DatabaseCorruptError(f"audit database {path} is not a readable DuckDB database: {message}")
    if "different configuration" in lowered:
        return StoreError(
            f"audit database {path} is already open in this process with other settings (e.g. read_only); "
            f"use one AuditStore per file per process and share it: {message}"
        )
    if "version number" in lowered or "storage version" in lowered:
        return StoreError(f"audit database {path} was written by an incompatible DuckDB version: {message}")
    return StoreError(f"audit database {path}: {message}")
