"""DuckDB for connectors: connections locked down to the files a source may read, and one way to run a query
(interrupted at the source's timeout, errors as ToolError)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb

from evigate.errors import ToolError
from evigate.store.connection import CONNECT_CONFIG
from evigate.tools.formatting import one_line


def sandboxed_connection(database: str = ":memory:", *, read_only: bool = False,
                         allowed: Iterable[str | os.PathLike[str]] = ()) -> duckdb.DuckDBPyConnection:
    """A connection that installs and autoloads no extension (nothing is fetched from the network) and reaches no
    file, URL or directory but those under `allowed` (DuckDB's `enable_external_access = false` plus
    `allowed_directories`; both settings lock themselves, so a query cannot turn them back on)."""
    try:
        connection = duckdb.connect(database, read_only=read_only, config=dict(CONNECT_CONFIG))
    except duckdb.Error as exc:
        raise ToolError(f"duckdb: {one_line(str(exc), 300)}") from None
    try:
        directories = sorted({os.path.join(os.path.realpath(path), "") for path in allowed})
        connection.execute("SET TimeZone = 'UTC'")
        if directories:
            connection.execute("SET allowed_directories = ?", [directories])
        connection.execute("SET enable_external_access = false")
    except duckdb.Error as exc:
        connection.close()
        raise ToolError(f"duckdb: {one_line(str(exc), 300)}") from None
    return connection


def allowed_roots(base_dir: Path, files: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The directories a source's connection may read: the domain directory and the folder of each declared file
    (outside the domain only when the source opted out of confinement, which its files were checked against)."""
    return [str(base_dir), *(os.path.dirname(os.path.realpath(path)) for path in files)]


def run_duckdb(connection: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | dict[str, Any],
               timeout_s: float, *, limit: int | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(column names, rows) — at most `limit` rows when given; DuckDB is interrupted when `timeout_s` passes."""
    timer = threading.Timer(timeout_s, connection.interrupt)
    timer.start()
    try:
        cursor = connection.execute(sql, params)
        columns = [column[0] for column in cursor.description or []]
        return columns, cursor.fetchmany(limit) if limit is not None else cursor.fetchall()
    except duckdb.InterruptException:
        raise ToolError(f"query exceeded the source timeout of {timeout_s:g}s") from None
    except duckdb.Error as exc:
        raise ToolError(f"duckdb: {one_line(str(exc), 300)}") from None
    finally:
        timer.cancel()
