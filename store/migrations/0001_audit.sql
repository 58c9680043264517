-- The audit trail: one row per diagnosis session, per tool call and per agent step.
-- Timestamps are UTC (TIMESTAMP without time zone, written by the application clock).
-- No secondary indexes: the foreign keys already index session_id, and DuckDB's zone maps serve range scans.
-- JSON columns use DuckDB's JSON type (statically linked in the duckdb wheel; no extension is fetched).

CREATE TABLE diagnosis_session (
    session_id          VARCHAR PRIMARY KEY,
    query               VARCHAR NOT NULL,
    status              VARCHAR NOT NULL DEFAULT 'running',
    created_at          TIMESTAMP NOT NULL,
    finished_at         TIMESTAMP,
    output_type         VARCHAR,
    verdict             VARCHAR,
    groundedness_score  DOUBLE CHECK (groundedness_score BETWEEN 0 AND 1),
    rounds              INTEGER CHECK (rounds >= 0),
    answer              VARCHAR,
    error               VARCHAR,
    settings            JSON,
    -- V1 "self_evaluation 存储约定": a container of independently written slots, never overwritten whole.
    self_evaluation     JSON NOT NULL DEFAULT '{}'
);

CREATE SEQUENCE tool_invocation_id_seq START 1;

CREATE TABLE tool_invocation (
    id                  BIGINT PRIMARY KEY DEFAULT nextval('tool_invocation_id_seq'),
    session_id          VARCHAR NOT NULL REFERENCES diagnosis_session (session_id),
    round               INTEGER NOT NULL CHECK (round >= 1),
    tool_name           VARCHAR NOT NULL,
    input               JSON NOT NULL,
    output_preview      VARCHAR NOT NULL,
    output              VARCHAR NOT NULL,
    retrieval_details   JSON,
    success             BOOLEAN NOT NULL,
    error               VARCHAR,
    is_evidence         BOOLEAN NOT NULL,
    started_at          TIMESTAMP NOT NULL,
    latency_ms          DOUBLE NOT NULL CHECK (latency_ms >= 0)
);

CREATE SEQUENCE agent_step_id_seq START 1;

CREATE TABLE agent_step (
    id                  BIGINT PRIMARY KEY DEFAULT nextval('agent_step_id_seq'),
    session_id          VARCHAR NOT NULL REFERENCES diagnosis_session (session_id),
    round               INTEGER NOT NULL CHECK (round >= 1),
    agent               VARCHAR NOT NULL,
    -- V1 "Observability adjustment": thought is concise; the full judgment lives in self_evaluation.
    thought             VARCHAR NOT NULL,
    model_output        VARCHAR NOT NULL,
    prompt_tokens       INTEGER NOT NULL CHECK (prompt_tokens >= 0),
    completion_tokens   INTEGER NOT NULL CHECK (completion_tokens >= 0),
    latency_ms          DOUBLE NOT NULL CHECK (latency_ms >= 0),
    status              VARCHAR NOT NULL,
    error               VARCHAR,
    created_at          TIMESTAMP NOT NULL
);

