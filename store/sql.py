"""The audit store's SQL, every statement parameterised (values never enter SQL text)."""

from __future__ import annotations

INSERT_SESSION = """
INSERT INTO diagnosis_session (session_id, query, status, created_at, settings, self_evaluation, owner_host,
                               owner_pid, owner_started, heartbeat_at)
VALUES (?, ?, 'running', ?, ?, '{}', ?, ?, ?, ?)
"""

# Session liveness (evigate/store/liveness.py): the owner's heartbeat, and the sessions to check on open.
HEARTBEAT = "UPDATE diagnosis_session SET heartbeat_at = ? WHERE session_id = ? AND status = 'running'"

SELECT_RUNNING = """
SELECT session_id, created_at, owner_host, owner_pid, owner_started, heartbeat_at
FROM diagnosis_session WHERE status = 'running'
"""

# Only while the row is still as it was read: a heartbeat or a finish in between means the owner lives.
INTERRUPT_ORPHAN = """
UPDATE diagnosis_session SET status = 'interrupted', finished_at = ?, answer = '', error = ?
WHERE session_id = ? AND status = 'running' AND heartbeat_at IS NOT DISTINCT FROM ?
"""

FINISH_SESSION = """
UPDATE diagnosis_session
SET status = ?, finished_at = ?, output_type = ?, verdict = ?, answer = ?, rounds = ?, groundedness_score = ?,
    error = ?
WHERE session_id = ?
"""

# V1 "self_evaluation 存储约定": read-modify-write of ONE slot, done by the database in one statement so two
# writers of different slots can never lose each other's slot. The container is read as MAP(VARCHAR, JSON) —
# every slot's JSON kept verbatim — and map_concat lets the new slot replace the old one whole (a JSON merge
# patch would instead merge nested objects and drop null values). All functions used are core/json, both
# statically linked in the duckdb wheel.
MERGE_SELF_EVALUATION = """
UPDATE diagnosis_session
SET self_evaluation = to_json(map_concat(
    CAST(COALESCE(self_evaluation, '{}') AS MAP(VARCHAR, JSON)),
    MAP {?: CAST(? AS JSON)}
))
WHERE session_id = ?
"""

SELECT_SESSION = "SELECT * FROM diagnosis_session WHERE session_id = ?"

SELECT_SESSIONS = """
SELECT * EXCLUDE (self_evaluation) FROM diagnosis_session ORDER BY created_at DESC, session_id DESC LIMIT ?
"""

INSERT_INVOCATION = """
INSERT INTO tool_invocation (session_id, round, tool_name, input, output_preview, output, retrieval_details,
                             success, error, is_evidence, started_at, latency_ms)
VALUES (?, ?, ?, CAST(? AS JSON), ?, ?, CAST(? AS JSON), ?, ?, ?, ?, ?)
RETURNING id
"""

_INVOCATION_COLUMNS = (
    "id, session_id, round, tool_name, input, output_preview, retrieval_details, success, error, is_evidence, "
    # the whole output only where the preview was cut: the Gatekeeper compares excerpts with it
    "CASE WHEN output = output_preview THEN NULL ELSE output END AS output"
)

SELECT_INVOCATIONS = f"SELECT {_INVOCATION_COLUMNS} FROM tool_invocation WHERE session_id = ? ORDER BY id"

SELECT_ROUND_INVOCATIONS = (
    f"SELECT {_INVOCATION_COLUMNS} FROM tool_invocation WHERE session_id = ? AND round = ? ORDER BY id"
)

SELECT_INVOCATION_OUTPUT = "SELECT output FROM tool_invocation WHERE id = ?"

INSERT_STEP = """
INSERT INTO agent_step (session_id, round, agent, thought, model_output, prompt_tokens, completion_tokens,
                        latency_ms, status, error, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING id
"""

SELECT_STEPS = "SELECT * FROM agent_step WHERE session_id = ? ORDER BY id"
