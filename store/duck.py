"""The DuckDB backend: a file held open only while this process uses it, or a private in-memory database.

DuckDB lets one process at a time open a file for writing, and a reader cannot open it while a writer holds it.
So a store never keeps its file open: each unit of work (one statement, one tool's query, one world build)
leases the file, and the last lease in the process closes it. A long `evigate ask` therefore holds the file for
milliseconds at a time, and `evigate show` or a second ask in another process gets in between. A process that
finds the file held by another one retries with a bounded wait, then raises :class:`DatabaseLockedError`.

Inside one process the leases of a file share one connection (threads get cursors of it), so stores opened on
the same file in one process see each other's writes, whatever their ``read_only`` flags.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import duckdb

from evigate.errors import DatabaseLockedError, StoreError
from evigate.store import sql
from evigate.store.connection import IN_MEMORY, open_connection, translate_error
from evigate.store.execution import pause, run_read, run_write
from evigate.store.migrate import migrate, require_current

LOCK_WAIT_SECONDS = 30.0
"""How long a unit of work waits for a file another process holds before raising DatabaseLockedError."""

LINGER_SECONDS = 0.25
"""How long an idle file stays open after its last lease: opening a DuckDB file costs ~40-70 ms on 2 busy cores,
so the bursts of writes a round makes share one opening, and the file is free again a quarter second later."""

MAX_HOLD_SECONDS = 1.0
"""A file open this long is closed at its next idle moment instead of lingering, and this process then lets
:data:`COURTESY_SECONDS` pass before opening it again: a busy worker cannot starve the others (file locks do not
queue), and it loses at most ~15% of its time to them."""

COURTESY_SECONDS = 0.15

_RETRY_CAP_SECONDS = 0.05  # below COURTESY_SECONDS, so a waiting process tries again within every courtesy gap


@dataclass
class _OpenFile:
    """This process's connection to one file and how many leases use it (``None`` while it is being opened)."""

    connection: duckdb.DuckDBPyConnection | None
    read_only: bool
    users: int
    pid: int
    idle_since: float = 0.0
    opened_at: float = 0.0


_FILES: dict[Path, _OpenFile] = {}
_FILES_CHANGED = threading.Condition()
# A lingering file is closed by a daemon timer thread. Were the interpreter to finish while such a thread is inside
# DuckDB's C++ code, the thread would be torn down there and the process abort ("terminate called … FATAL: exception
# not rethrown", exit 134). So at exit no closer starts any more, those closing are waited for, and the idle files
# are closed on the exiting thread itself.
_EXIT = {"exiting": False, "closing": 0}
EXIT_CLOSE_WAIT_S = 5.0
_COURTESY_UNTIL: dict[Path, float] = {}  # no reopening before then: another process's turn


class LeasedCursor:
    """A cursor that holds its file while open. ``with store.cursor() as cursor`` yields the DuckDB cursor itself;
    used without ``with``, attribute access goes to that cursor and :meth:`close` ends the lease."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection, release: Any) -> None:
        self._cursor, self._release = cursor, release

    def __enter__(self) -> duckdb.DuckDBPyConnection:
        return self._cursor

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)

    def close(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            with contextlib.suppress(duckdb.Error):
                self._cursor.close()
            release()

    def __del__(self) -> None:  # a cursor its user forgot must not keep the file locked for other processes
        with contextlib.suppress(Exception):  # at interpreter shutdown the module's globals may be gone already
            self.close()


class DuckDBBackend:
    """The audit tables (and any other tables, e.g. the demo world) of one DuckDB file or ``:memory:``."""

    dialect = sql

    def __init__(
        self, path: Path, *, read_only: bool, lock_wait_seconds: float = LOCK_WAIT_SECONDS, audit: bool = True
    ) -> None:
        """``audit=False``: a database for other tables only (the demo world beside a PostgreSQL audit)."""
        self.path, self.read_only, self.lock_wait_seconds = path, read_only, lock_wait_seconds
        self.location = str(path)
        self._memory: duckdb.DuckDBPyConnection | None = None
        if str(path) == IN_MEMORY:
            self._memory = open_connection(path, read_only=False)
        if not audit:
            return
        with self.connection() as connection:
            try:
                if read_only:
                    require_current(connection, path)
                else:
                    migrate(connection, path)
            except duckdb.Error as exc:
                raise translate_error(exc, path) from exc

    # -- leases ----------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of the file, holding it for the ``with`` block."""
        if self._memory is not None:
            with self._memory.cursor() as cursor:
                yield cursor
            return
        connection = self._acquire()
        try:
            with connection.cursor() as cursor:
                yield cursor
        finally:
            self._release()

    def cursor(self) -> LeasedCursor:
        if self._memory is not None:
            return LeasedCursor(self._memory.cursor(), lambda: None)
        return LeasedCursor(self._acquire().cursor(), self._release)

    def _acquire(self) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + self.lock_wait_seconds
        with _FILES_CHANGED:
            while True:
                entry = _FILES.get(self.path)
                if entry is None or entry.pid != os.getpid():  # a connection inherited over fork is not ours
                    entry = _FILES[self.path] = _OpenFile(None, self.read_only, 0, os.getpid())
                    break
                if entry.connection is not None and (self.read_only or not entry.read_only):
                    entry.users += 1
                    return entry.connection
                # Being opened by another thread, or open read-only while this store must write: wait for it.
                if not _FILES_CHANGED.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise self._locked(f"another store of this process kept it open for {self.lock_wait_seconds:g}s")
        try:
            connection = self._open(deadline)
        except BaseException:
            with _FILES_CHANGED:
                del _FILES[self.path]
                _FILES_CHANGED.notify_all()
            raise
        with _FILES_CHANGED:
            entry.connection, entry.users, entry.opened_at = connection, 1, time.monotonic()
            _FILES_CHANGED.notify_all()
        return connection

    def _open(self, deadline: float) -> duckdb.DuckDBPyConnection:
        """Open the file, retrying while another process holds it, until ``deadline``."""
        courtesy = _COURTESY_UNTIL.pop(self.path, 0.0) - time.monotonic()
        if courtesy > 0:
            time.sleep(courtesy)
        attempt = 0
        while True:
            try:
                return open_connection(self.path, read_only=self.read_only)
            except DatabaseLockedError as exc:
                if time.monotonic() >= deadline:
                    raise self._locked(f"waited {self.lock_wait_seconds:g}s") from exc
            attempt += 1
            pause(attempt, cap=_RETRY_CAP_SECONDS)

    def _release(self) -> None:
        with _FILES_CHANGED:
            entry = _FILES.get(self.path)
            if entry is None or entry.pid != os.getpid():
                return
            entry.users -= 1
            if entry.users > 0:
                return
            entry.idle_since = time.monotonic()
            _FILES_CHANGED.notify_all()
            held_too_long = entry.idle_since - entry.opened_at >= MAX_HOLD_SECONDS
        if held_too_long:
            _close_if_idle(self.path, entry, 0.0)
            _COURTESY_UNTIL[self.path] = time.monotonic() + COURTESY_SECONDS
            return
        closer = threading.Timer(LINGER_SECONDS, _close_if_idle, args=(self.path, entry, LINGER_SECONDS))
        closer.daemon = True
        closer.start()

    def close_if_idle(self) -> None:
        """Close the file now if no lease of this process uses it (a closing store does not linger)."""
        _close_if_idle(self.path, _FILES.get(self.path), 0.0)

    def _locked(self, why: str) -> DatabaseLockedError:
        return DatabaseLockedError(
            f"audit database {self.path} is locked by another process ({why}); DuckDB lets one process write a "
            "file at a time and evigate holds it only while it writes: retry, or use PostgreSQL for many workers"
        )

    # -- statements --------------------------------------------------------------------------------------------
    def read(self, statement: str, params: list[Any], json_columns: dict) -> list[dict[str, Any]]:
        return run_read(self.connection, statement, params, json_columns, self.path)

    def write(
        self, statement: str, params: list[Any], *, session_id: str, lock: contextlib.AbstractContextManager | None
    ) -> list[tuple[Any, ...]]:
        if self.read_only:
            raise StoreError(f"audit store {self.path} is read-only")
        return run_write(
            self.connection, statement, params, path=self.path, session_id=session_id, read_only=self.read_only,
            lock=lock,
        )  # fmt: skip

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()
        else:
            self.close_if_idle()


def _close_if_idle(path: Path, entry: _OpenFile | None, idle_for: float) -> None:
    with _FILES_CHANGED:
        if entry is None or _FILES.get(path) is not entry or entry.users > 0 or entry.pid != os.getpid():
            return
        if entry.connection is None or time.monotonic() - entry.idle_since < idle_for * 0.99:
            return  # being closed already, or reused and released again since (that release scheduled its closer)
        if _EXIT["exiting"] and threading.current_thread() is not threading.main_thread():
            return  # the exit handler closes it on its own thread
        # Stay registered, with no connection, until DuckDB has really let go of the file: an opening in this
        # process meanwhile would otherwise meet the closing instance ("different configuration").
        connection, entry.connection = entry.connection, None
        _EXIT["closing"] += 1
    try:
        with contextlib.suppress(duckdb.Error):
            connection.close()
    finally:
        with _FILES_CHANGED:
            _EXIT["closing"] -= 1
            if _FILES.get(path) is entry:
                del _FILES[path]
            _FILES_CHANGED.notify_all()


def close_idle_files_at_exit(timeout_s: float = EXIT_CLOSE_WAIT_S) -> None:
    """Stop the daemon closers, wait briefly for those closing, and close every idle file on this thread."""
    with _FILES_CHANGED:
        _EXIT["exiting"] = True
        _FILES_CHANGED.wait_for(lambda: _EXIT["closing"] == 0, timeout_s)
        idle = [(path, entry) for path, entry in _FILES.items()
                if entry.connection is not None and entry.users == 0 and entry.pid == os.getpid()]
    for path, entry in idle:
        _close_if_idle(path, entry, 0.0)


atexit.register(close_idle_files_at_exit)
