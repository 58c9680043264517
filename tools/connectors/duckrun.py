"""One way to run a DuckDB query for a connector: interrupted at the source's timeout, errors as ToolError."""

from __future__ import annotations

import threading
from typing import Any

import duckdb

from evigate.errors import ToolError
from evigate.tools.formatting import one_line


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
