"""`AuditStore`: the audit trail of diagnosis sessions, tool invocations and agent steps, on DuckDB or PostgreSQL.

``AuditStore("evigate.duckdb")`` (the embedded default) or ``AuditStore("postgresql://user@host/db")`` (a team's
database shared by several workers): the same API, the same migrations, the same results. Any number of threads
may share one store. A DuckDB file is held only while a statement runs (see :mod:`evigate.store.duck`), so other
processes read and write it between one's writes. Other tables (the demo world's ``world_*``) are reached through
:meth:`AuditStore.cursor`: in the DuckDB file itself, or in a private in-memory DuckDB beside a PostgreSQL store.

Text is cleaned at this boundary (:func:`evigate.store.codec.clean_text`): what no backend can hold — lone
surrogates, NUL — is stored as U+FFFD, on both backends alike, instead of failing the write.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from evigate.errors import AuditValueError, InvocationNotFoundError, SessionNotFoundError, StoreError
from evigate.signatures import ToolInvocation
from evigate.store.codec import clean_text, require_finite, to_json_text
from evigate.store.connection import normalise_path
from evigate.store.duck import LOCK_WAIT_SECONDS, DuckDBBackend, LeasedCursor
from evigate.store.listing import SessionQuery, invocation_records_statement, listing_statements
from evigate.store.liveness import Heartbeat, interrupt_orphans, this_process
from evigate.store.postgres import PostgresBackend, is_postgres_url
from evigate.store.preview import make_preview
from evigate.store.rows import (
    INVOCATION_JSON_COLUMNS,
    SESSION_JSON_COLUMNS,
    SESSION_STATUSES,
    THOUGHT_CHARS,
    finish_params,
    invocation_params,
    recorded_invocation,
    redacted,
    self_evaluation_json,
    utc_now,
)

__all__ = ["SESSION_STATUSES", "THOUGHT_CHARS", "AuditStore"]  # the constants live in rows.py, re-exported here

logger = logging.getLogger(__name__)


class AuditStore:
    """The audit tables of one DuckDB file or PostgreSQL database, created and migrated on open.

    ``location`` is a DuckDB file path, ``":memory:"`` for a private in-memory database, or a
    ``postgresql://`` URL (credentials from the URL or libpq's ``PG*`` environment). ``read_only=True`` opens an
    existing, already migrated database without writing anything. ``lock_wait_seconds``: how long a DuckDB
    statement waits for a file another process holds before raising :class:`DatabaseLockedError`.

    Sessions record their owner process and a heartbeat; opened read-write, the store marks ``running`` sessions
    whose owner is gone ``interrupted`` (:meth:`interrupt_orphans`, :mod:`evigate.store.liveness`).
    """

    def __init__(
        self,
        location: str | os.PathLike[str] = "evigate.duckdb",
        *,
        read_only: bool = False,
        lock_wait_seconds: float = LOCK_WAIT_SECONDS,
    ) -> None:
        self._read_only = read_only
        # Writers of the same session row would otherwise collide in DuckDB's optimistic concurrency control
        # and retry; queueing them here is cheaper. Each write is still one atomic SQL statement.
        self._session_update_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._closed = False
        self._backend: DuckDBBackend | PostgresBackend
        if isinstance(location, str) and is_postgres_url(location):
            self._backend = PostgresBackend(location, read_only=read_only)
        else:
            self._backend = DuckDBBackend(
                normalise_path(location), read_only=read_only, lock_wait_seconds=lock_wait_seconds
            )
        self._path = self._backend.path
        self._heartbeat = Heartbeat(self._beat)
        if not read_only:
            self.interrupt_orphans()

    # -- lifecycle ---------------------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The database file (absolute), ``Path(":memory:")``, or for PostgreSQL its URL without the password."""
        return self._path

    @property
    def location(self) -> str:
        """Where the audit lives, fit to print: a file path or a URL without its password."""
        return self._backend.location

    @property
    def backend(self) -> str:
        """``"duckdb"`` or ``"postgresql"``."""
        return "postgresql" if isinstance(self._backend, PostgresBackend) else "duckdb"

    @property
    def read_only(self) -> bool:
        """Whether the store was opened read-only."""
        return self._read_only

    def cursor(self) -> LeasedCursor:
        """A DuckDB cursor for one thread's unit of work on other tables (the demo world): ``with store.cursor()``.

        For a DuckDB store it holds the file until closed, so keep the block short.
        """
        self._require_open()
        return self._backend.cursor()

    def close(self) -> None:
        """Close the store (idempotent). Cursors handed out by :meth:`cursor` must be closed by their users."""
        with self._state_lock:
            if self._closed:
                return
            self._closed = True
        self._heartbeat.stop()
        self._backend.close()

    def release(self) -> None:
        """Let go of the DuckDB file now, if no unit of work of this process uses it, instead of after the short
        linger that lets bursts of writes share one opening: a finished question leaves the file to other
        processes (and to read-only connections of this one). The store stays open; the next write reopens it."""
        if isinstance(self._backend, DuckDBBackend):
            self._backend.close_if_idle()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("read-only" if self._read_only else "open")
        return f"AuditStore({self.location!r}, {state})"

    # -- sessions ----------------------------------------------------------------------------------------

    def start_session(self, query: str, *, session_id: str | None = None, settings: dict | None = None) -> str:
        """Insert a ``running`` session and return its id (a uuid4 hex unless ``session_id`` is given)."""
        session_id = uuid.uuid4().hex if session_id is None else session_id
        if not isinstance(session_id, str) or not session_id.strip():
            raise AuditValueError(f"session_id must be a non-empty string, got {session_id!r}")
        # Credentials never reach the audit: a database URL in the snapshot keeps everything but its password.
        settings_json = None if settings is None else to_json_text(redacted(settings), "settings")
        owner, now = this_process(), utc_now()
        params = [session_id, query, now, settings_json, owner.host, owner.pid, owner.started, now]
        self._write("INSERT_SESSION", params, session_id=session_id)
        self._heartbeat.add(session_id)
        return session_id

    def finish_session(
        self,
        session_id: str,
        *,
        output_type: str | None,
        verdict: str | None,
        answer: str,
        rounds: int,
        groundedness_score: float | None,
        error: str | None = None,
        status: str = "finished",
    ) -> None:
        """Record a session's outcome and end time; ``self_evaluation`` is left untouched.

        ``status`` is ``finished``, ``failed`` or ``interrupted`` (see :data:`SESSION_STATUSES`).
        """
        params = finish_params(
            session_id, output_type=output_type, verdict=verdict, answer=answer, rounds=rounds,
            groundedness_score=groundedness_score, error=error, status=status,
        )
        updated = self._write("FINISH_SESSION", params, session_id=session_id, serialise_session_update=True)
        self._heartbeat.discard(session_id)
        if updated[0][0] == 0:
            raise SessionNotFoundError(f"no diagnosis session {session_id!r} in {self._path}")

    def interrupt_orphans(self) -> list[str]:
        """Mark ``running`` sessions whose owner process is gone ``interrupted``, with the reason; return their ids.

        Runs when a store opens read-write. Sessions of live processes (this one included) are never touched; see
        :mod:`evigate.store.liveness` for how an owner is judged gone. A failure here is logged, not raised: it
        only delays the marking to the next opening.
        """
        def interrupt(params: list[Any]) -> bool:
            updated = self._write("INTERRUPT_ORPHAN", params, session_id=params[2], serialise_session_update=True)
            return bool(updated[0][0])

        marked: list[str] = []
        try:
            marked = interrupt_orphans(lambda: self._read("SELECT_RUNNING", [], {}), interrupt, utc_now())
        except StoreError as exc:
            logger.warning("could not check %s for sessions of processes that are gone: %s", self.location, exc)
        if marked:
            logger.warning("marked %d session(s) interrupted whose process is gone: %s", len(marked), marked)
        return marked

    def _beat(self, session_id: str) -> None:
        if not self._closed:
            self._write("HEARTBEAT", [utc_now(), session_id], session_id=session_id)

    def merge_self_evaluation(self, session_id: str, slot: str, value: dict) -> None:
        """Replace one ``self_evaluation`` slot whole, keeping every other slot, in one atomic SQL statement."""
        value_json = self_evaluation_json(slot, value)
        params = [slot, value_json, session_id]
        updated = self._write("MERGE_SELF_EVALUATION", params, session_id=session_id, serialise_session_update=True)
        if updated[0][0] == 0:
            raise SessionNotFoundError(f"no diagnosis session {session_id!r} in {self._path}")

    def session(self, session_id: str) -> dict[str, Any]:
        """Every column of one session; ``settings`` and ``self_evaluation`` parsed (``{}`` if no slot is set).

        Timestamps (``created_at``, ``finished_at``) are naive datetimes in UTC.
        """
        records = self._read("SELECT_SESSION", [session_id], SESSION_JSON_COLUMNS)
        if not records:
            raise SessionNotFoundError(f"no diagnosis session {session_id!r} in {self._path}")
        return records[0]

    def sessions(self, limit: int = 20) -> list[dict[str, Any]]:
        """The ``limit`` newest sessions, newest first, without ``self_evaluation``."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise AuditValueError(f"limit must be an int >= 0, got {limit!r}")
        return self._read("SELECT_SESSIONS", [limit], SESSION_JSON_COLUMNS)

    def find_sessions(self, query: SessionQuery | None = None) -> dict[str, Any]:
        """One page of sessions matching ``query``, newest first: ``{"sessions", "total", "limit", "offset"}``.

        Rows carry the listing columns only (no answer, settings or self_evaluation); ``total`` counts every match.
        """
        query = query or SessionQuery()
        count, page, params = listing_statements(query, postgres=self.backend == "postgresql")
        total = self._read_sql(count, params, {})[0]["total"]
        rows = self._read_sql(page, [*params, query.limit, query.offset], {})
        return {"sessions": rows, "total": int(total), "limit": query.limit, "offset": query.offset}

    # -- tool invocations --------------------------------------------------------------------------------

    def record_invocation(
        self,
        session_id: str,
        round: int,
        tool_name: str,
        input: dict,
        output: str,
        *,
        retrieval_details: dict | list | None = None,
        success: bool = True,
        error: str | None = None,
        is_evidence: bool = True,
        latency_ms: float = 0.0,
        preview_chars: int = 2000,
    ) -> ToolInvocation:
        """Store one tool call (the whole output plus a capped preview) and return it as the Gatekeeper sees it.

        ``started_at`` is taken as now minus ``latency_ms``: the call is recorded right after it returns.
        """
        params = invocation_params(
            session_id, round, tool_name, input, output, retrieval_details=retrieval_details, success=success,
            error=error, is_evidence=is_evidence, latency_ms=latency_ms, preview_chars=preview_chars,
        )
        invocation_id = self._write("INSERT_INVOCATION", params, session_id=session_id)[0][0]
        return recorded_invocation(invocation_id, params)

    def invocations(self, session_id: str, round: int | None = None) -> list[ToolInvocation]:
        """The session's invocations (of one round if given), oldest first; [] for an unknown session."""
        if round is None:
            records = self._read("SELECT_INVOCATIONS", [session_id], INVOCATION_JSON_COLUMNS)
        else:
            records = self._read("SELECT_ROUND_INVOCATIONS", [session_id, round], INVOCATION_JSON_COLUMNS)
        return [ToolInvocation(**record) for record in records]

    def invocation_records(
        self, session_id: str, *, invocation_id: int | None = None, with_output: bool = True
    ) -> list[dict[str, Any]]:
        """The session's invocations (or the one ``invocation_id``) for a viewer, oldest first: every column but the
        preview, ``output_chars``, and the whole ``output`` when ``with_output``; [] for an unknown session."""
        self._require_open()
        statement = invocation_records_statement(
            self.backend == "postgresql", with_output=with_output, one=invocation_id is not None)
        params = [session_id] if invocation_id is None else [session_id, invocation_id]
        return self._read_sql(statement, params, INVOCATION_JSON_COLUMNS)

    def invocation_output(self, invocation_id: int) -> str:
        """The whole output of one invocation (the preview may be truncated)."""
        records = self._read("SELECT_INVOCATION_OUTPUT", [invocation_id], {})
        if not records:
            raise InvocationNotFoundError(f"no tool invocation {invocation_id!r} in {self._path}")
        return records[0]["output"]

    # -- agent steps -------------------------------------------------------------------------------------

    def record_step(
        self,
        session_id: str,
        round: int,
        agent: str,
        *,
        thought: str,
        model_output: str,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        latency_ms: float = 0.0,
        status: str = "ok",
        error: str | None = None,
    ) -> int:
        """Store one agent call; ``thought`` is capped at :data:`THOUGHT_CHARS`, ``model_output`` kept whole."""
        params = [
            session_id,
            round,
            agent,
            make_preview(thought, THOUGHT_CHARS),
            model_output,
            prompt_tokens,
            completion_tokens,
            require_finite(latency_ms, "latency_ms"),
            status,
            error,
            utc_now(),
        ]
        return self._write("INSERT_STEP", params, session_id=session_id)[0][0]

    def steps(self, session_id: str) -> list[dict[str, Any]]:
        """The session's agent steps as dicts of every column, oldest first."""
        return self._read("SELECT_STEPS", [session_id], {})

    # -- plumbing ----------------------------------------------------------------------------------------

    def _require_open(self) -> None:
        if self._closed:
            raise StoreError(f"audit store {self.location} is closed")

    def _read(self, statement: str, params: Sequence[Any], json_columns: dict) -> list[dict[str, Any]]:
        self._require_open()
        return self._backend.read(getattr(self._backend.dialect, statement), list(params), json_columns)

    def _read_sql(self, sql_text: str, params: Sequence[Any], json_columns: dict) -> list[dict[str, Any]]:
        """A statement built for this backend (placeholders already its own), every value a parameter."""
        self._require_open()
        return self._backend.read(sql_text, list(params), json_columns)

    def _write(
        self, statement: str, params: Sequence[Any], *, session_id: str, serialise_session_update: bool = False
    ) -> list[tuple[Any, ...]]:
        self._require_open()
        cleaned = [clean_text(value) if isinstance(value, str) else value for value in params]
        lock = self._session_update_lock if serialise_session_update else contextlib.nullcontext()
        sql_text = getattr(self._backend.dialect, statement)
        return self._backend.write(sql_text, cleaned, session_id=session_id, lock=lock)

