"""The audit store's SQL for PostgreSQL: the statements of :mod:`evigate.store.sql`, same names, same results.

Every statement is parameterised (``%s``; values never enter SQL text). JSON columns are read back as text
(``::text``), so both backends hand the codec the same thing to parse. Statements that need nothing of
PostgreSQL's own are DuckDB's, with ``%s`` placeholders.
"""

from __future__ import annotations

from evigate.store import sql


def _with_pg_placeholders(statement: str) -> str:
    """A statement of :mod:`evigate.store.sql` with psycopg's ``%s`` for DuckDB's ``?`` (none is in a literal)."""
    return statement.replace("?", "%s")


INSERT_SESSION = """
INSERT INTO diagnosis_session (session_id, query, status, created_at, settings, self_evaluation, owner_host,
                               owner_pid, owner_started, heartbeat_at)
VALUES (%s, %s, 'running', %s, %s::jsonb, '{}'::jsonb, %s, %s, %s, %s)
"""

HEARTBEAT = _with_pg_placeholders(sql.HEARTBEAT)

SELECT_RUNNING = sql.SELECT_RUNNING

INTERRUPT_ORPHAN = _with_pg_placeholders(sql.INTERRUPT_ORPHAN).replace(
    "IS NOT DISTINCT FROM %s", "IS NOT DISTINCT FROM %s::timestamp"  # an untyped NULL parameter needs its type
)

FINISH_SESSION = _with_pg_placeholders(sql.FINISH_SESSION)

# V1 "self_evaluation 存储约定": one slot replaced whole by one statement. The row lock the UPDATE takes makes
# concurrent writers of different slots apply one after the other, each on the other's result; jsonb `||`
# replaces a top-level key whole (no deep merge), exactly like DuckDB's map_concat.
MERGE_SELF_EVALUATION = """
UPDATE diagnosis_session
SET self_evaluation = COALESCE(self_evaluation, '{}'::jsonb) || jsonb_build_object(%s::text, %s::jsonb)
WHERE session_id = %s
"""

_SESSION_COLUMNS = (
    "session_id, query, status, created_at, finished_at, output_type, verdict, groundedness_score, rounds, answer, "
    "error, settings::text AS settings, owner_host, owner_pid, owner_started, heartbeat_at"
)

SELECT_SESSION = (
    f"SELECT {_SESSION_COLUMNS}, self_evaluation::text AS self_evaluation FROM diagnosis_session WHERE session_id = %s"
)

SELECT_SESSIONS = f"""
SELECT {_SESSION_COLUMNS} FROM diagnosis_session ORDER BY created_at DESC, session_id DESC LIMIT %s
"""

INSERT_INVOCATION = """
INSERT INTO tool_invocation (session_id, round, tool_name, input, output_preview, output, retrieval_details,
                             success, error, is_evidence, started_at, latency_ms)
VALUES (%s, %s, %s, %s::jsonb, %s, %s, %s::jsonb, %s, %s, %s, %s, %s)
RETURNING id
"""

_INVOCATION_COLUMNS = (
    "id, session_id, round, tool_name, input::text AS input, output_preview, "
    "retrieval_details::text AS retrieval_details, success, error, is_evidence, "
    # the whole output only where the preview was cut: the Gatekeeper compares excerpts with it (as on DuckDB)
    "CASE WHEN output = output_preview THEN NULL ELSE output END AS output"
)

SELECT_INVOCATIONS = f"SELECT {_INVOCATION_COLUMNS} FROM tool_invocation WHERE session_id = %s ORDER BY id"

SELECT_ROUND_INVOCATIONS = (
    f"SELECT {_INVOCATION_COLUMNS} FROM tool_invocation WHERE session_id = %s AND round = %s ORDER BY id"
)

SELECT_INVOCATION_OUTPUT = _with_pg_placeholders(sql.SELECT_INVOCATION_OUTPUT)

INSERT_STEP = _with_pg_placeholders(sql.INSERT_STEP)

SELECT_STEPS = _with_pg_placeholders(sql.SELECT_STEPS)
