"""Listing past sessions: filters, pages, newest first — one query for DuckDB and PostgreSQL alike.

``GET /v1/sessions``, ``evigate show --list`` and the workbench's ``/sessions`` page all call
:meth:`evigate.store.AuditStore.find_sessions` with a :class:`SessionQuery`. The WHERE clause is assembled from
fixed fragments; every value is a bound parameter (nothing a user typed enters SQL text).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from evigate.errors import AuditValueError

VERDICTS = ("PASS", "LOW_CONFID", "REJECT")
OUTPUT_TYPES = ("NORMAL", "LOW_CONFID_WITH_DISCLAIMER", "DEGRADED")
STATUSES = ("running", "finished", "failed", "interrupted")
MAX_PAGE = 200
MAX_TEXT_CHARS = 200

LIST_COLUMNS = (
    "session_id, query, status, created_at, finished_at, output_type, verdict, groundedness_score, rounds, error"
)
# One haystack per row for the text filter: the question, the answer and the id, case-insensitive on both backends.
_TEXT = "strpos(lower(query || ' ' || COALESCE(answer, '') || ' ' || session_id), lower(?)) > 0"


@dataclass(frozen=True)
class SessionQuery:
    """Filters and page of a session listing. ``since``/``until`` bound ``created_at`` (UTC; until exclusive)."""

    verdict: str | None = None
    output_type: str | None = None
    status: str | None = None
    since: datetime | str | None = None  # an ISO 8601 string is parsed; an aware time is converted to UTC
    until: datetime | str | None = None
    text: str | None = None
    limit: int = 20
    offset: int = 0

    def __post_init__(self) -> None:
        _one_of("verdict", self.verdict, VERDICTS)
        _one_of("output_type", self.output_type, OUTPUT_TYPES)
        _one_of("status", self.status, STATUSES)
        for name in ("limit", "offset"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise AuditValueError(f"{name} must be an integer, got {value!r}")
        if not 1 <= self.limit <= MAX_PAGE:
            raise AuditValueError(f"limit must lie in [1, {MAX_PAGE}], got {self.limit}")
        if self.offset < 0:
            raise AuditValueError(f"offset must be >= 0, got {self.offset}")
        if self.text is not None and len(self.text) > MAX_TEXT_CHARS:
            raise AuditValueError(f"text filter is longer than {MAX_TEXT_CHARS} characters")
        object.__setattr__(self, "since", as_utc(self.since, "since"))
        object.__setattr__(self, "until", as_utc(self.until, "until"))
        if self.text is not None and not self.text.strip():
            object.__setattr__(self, "text", None)

    def where(self) -> tuple[str, list[Any]]:
        """``WHERE …`` (or "") with ``?`` placeholders, and its parameters in order."""
        clauses: list[str] = []
        params: list[Any] = []
        for column in ("verdict", "output_type", "status"):
            value = getattr(self, column)
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if self.since is not None:
            clauses.append("created_at >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append("created_at < ?")
            params.append(self.until)
        if self.text is not None:
            clauses.append(_TEXT)
            params.append(self.text.strip())
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


def _one_of(name: str, value: str | None, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        raise AuditValueError(f"{name} must be one of {list(allowed)}, got {value!r}")


def as_utc(value: datetime | str | None, name: str) -> datetime | None:
    """A naive UTC datetime (how the store keeps ``created_at``) from a datetime or an ISO 8601 string."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise AuditValueError(f"{name} must be an ISO 8601 date or time, got {value!r}") from None
    if not isinstance(value, datetime):
        raise AuditValueError(f"{name} must be a datetime, got {type(value).__name__}")
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo is not None else value


def invocation_records_statement(postgres: bool, *, with_output: bool, one: bool) -> str:
    """A viewer's columns of a session's invocations (``?``: session id, then the invocation id when ``one``):
    arguments, success, when the call started, how long it took, how long its output is, and the whole output
    only ``with_output`` (a page lists fifty 20 KB calls without reading them)."""
    json_text = "::text" if postgres else ""
    columns = (f"id, round, tool_name, input{json_text} AS input, retrieval_details{json_text} AS retrieval_details, "
               "success, error, is_evidence, started_at, latency_ms, length(output) AS output_chars")
    statement = (f"SELECT {columns}{', output' if with_output else ''} FROM tool_invocation WHERE session_id = ?"
                 f"{' AND id = ?' if one else ''} ORDER BY id")
    return statement.replace("?", "%s") if postgres else statement


def listing_statements(query: SessionQuery, postgres: bool) -> tuple[str, str, list[Any]]:
    """(count statement, page statement, filter parameters); the page takes ``limit, offset`` after them."""
    where, params = query.where()
    count = f"SELECT count(*) AS total FROM diagnosis_session {where}"
    page = (f"SELECT {LIST_COLUMNS} FROM diagnosis_session {where} "
            "ORDER BY created_at DESC, session_id DESC LIMIT ? OFFSET ?")
    if postgres:  # no "?" occurs in a literal of these statements
        count, page = count.replace("?", "%s"), page.replace("?", "%s")
    return count, page, params
