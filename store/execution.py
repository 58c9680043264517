"""Running the store's statements: one autocommitted statement per call, DuckDB errors mapped to evigate's."""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import duckdb

from evigate.errors import AuditValueError, SessionNotFoundError, StoreError
from evigate.store.codec import rows_to_dicts
from evigate.store.connection import translate_error

CursorFactory = Callable[[], AbstractContextManager[duckdb.DuckDBPyConnection]]

CONFLICT_RETRY_SECONDS = 10.0
CONFLICT_PAUSE_CAP_SECONDS = 0.02  # a conflicting write commits in milliseconds: retry soon
"""How long a write retries DuckDB's optimistic-concurrency conflicts before giving up."""


def run_read(
    open_cursor: CursorFactory, statement: str, params: Sequence[Any], json_columns: dict, path: Path
) -> list[dict[str, Any]]:
    """Rows of a query as dicts (JSON columns parsed)."""
    with open_cursor() as cursor:
        try:
            result = cursor.execute(statement, params)
            columns = [column[0] for column in result.description]
            return rows_to_dicts(columns, result.fetchall(), json_columns)
        except duckdb.Error as exc:
            raise translate_error(exc, path) from exc


def run_write(
    open_cursor: CursorFactory,
    statement: str,
    params: Sequence[Any],
    *,
    path: Path,
    session_id: str,
    read_only: bool,
    lock: AbstractContextManager[Any] | None = None,
) -> list[tuple[Any, ...]]:
    """Run one autocommitted statement and return its rows (RETURNING values or the changed-row count).

    DuckDB's optimistic concurrency rejects a write that collides with another uncommitted write of the same
    row ("Conflict on update"); the rejected statement applied nothing, so running it again is safe.
    """
    deadline = time.monotonic() + CONFLICT_RETRY_SECONDS
    attempt = 0
    while True:
        with open_cursor() as cursor:
            try:
                with lock if lock is not None else contextlib.nullcontext():
                    return cursor.execute(statement, params).fetchall()
            except duckdb.TransactionException as exc:
                if "conflict" not in str(exc).lower() or time.monotonic() > deadline:
                    raise translate_error(exc, path) from exc
            except duckdb.Error as exc:
                raise write_error(exc, path, session_id, read_only) from exc
        attempt += 1
        pause(attempt, cap=CONFLICT_PAUSE_CAP_SECONDS)


def pause(attempt: int, *, cap: float) -> None:
    """Sleep before retry number `attempt`: exponential from 2 ms, capped, with jitter so that processes retrying
    the same file do not collide again in step. The one backoff of the store (lock waits and write conflicts)."""
    time.sleep(min(cap, 0.002 * 2 ** min(attempt, 5)) * random.uniform(0.5, 1.0))


def write_error(exc: duckdb.Error, path: Path, session_id: str, read_only: bool) -> StoreError | AuditValueError:
    """The evigate error for a failed write: unknown session, duplicate id, rejected value, read-only file."""
    message = str(exc)
    lowered = message.lower()
    if isinstance(exc, duckdb.ConstraintException):
        if "foreign key" in lowered:
            return SessionNotFoundError(f"no diagnosis session {session_id!r} in {path}: {message}")
        if "duplicate key" in lowered or "primary key" in lowered:
            return AuditValueError(f"diagnosis session {session_id!r} already exists in {path}")
        return AuditValueError(f"value rejected by {path}: {message}")
    if isinstance(exc, duckdb.ConversionException | duckdb.InvalidInputException):
        if read_only:
            return StoreError(f"audit store {path} is read-only: {message}")
        return AuditValueError(f"cannot store this value in {path}: {message}")
    return translate_error(exc, path)
