"""The audit store's SQL for PostgreSQL: the statements of :mod:`evigate.store.sql`, same names, same results.

Every statement is parameterised (``%s``; values never enter SQL text). JSON columns are read back as text
(``::text``), so both backends hand the codec the same thing to parse.
"""

from __future__ import annotations

INSERT_SESSION = """
INSERT INTO diagnosis_session (session_id, query, status, created_at, settings, self_evaluation)
VALUES (%s, %s, 'running', %s, %s::jsonb, '{}'::jsonb)
"""

FINISH_SESSION = """
UPDATE diagnosis_session
SET status = %s, finished_at = %s, output_type = %s, verdict = %s, answer = %s, rounds = %s, groundedness_score = %s,
    error = %s
WHERE session_id = %s
"""

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
    "error, settings::text AS settings"
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
    "retrieval_details::text AS retrieval_details, success, error, is_evidence"
)

SELECT_INVOCATIONS = f"SELECT {_INVOCATION_COLUMNS} FROM tool_invocation WHERE session_id = %s ORDER BY id"

SELECT_ROUND_INVOCATIONS = (
    f"SELECT {_INVOCATION_COLUMNS} FROM tool_invocation WHERE session_id = %s AND round = %s ORDER BY id"
)

SELECT_INVOCATION_OUTPUT = "SELECT output FROM tool_invocation WHERE id = %s"

INSERT_STEP = """
INSERT INTO agent_step (session_id, round, agent, thought, model_output, prompt_tokens, completion_tokens,
                        latency_ms, status, error, created_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
RETURNING id
"""

SELECT_STEPS = "SELECT * FROM agent_step WHERE session_id = %s ORDER BY id"
