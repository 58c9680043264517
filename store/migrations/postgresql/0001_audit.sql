-- The audit trail on PostgreSQL: the same tables, columns and constraints as ../0001_audit.sql (DuckDB).
-- Timestamps are UTC (TIMESTAMP without time zone, written by the application clock).
-- JSON columns are jsonb, so the self_evaluation slot merge is one atomic `||` in the database.

CREATE TABLE diagnosis_session (
    session_id          TEXT PRIMARY KEY,
    query               TEXT NOT NULL,
    status              TEXT NOT NULL DEFAULT 'running',
    created_at          TIMESTAMP NOT NULL,
    finished_at         TIMESTAMP,
    output_type         TEXT,
    verdict             TEXT,
    groundedness_score  DOUBLE PRECISION CHECK (groundedness_score BETWEEN 0 AND 1),
    rounds              INTEGER CHECK (rounds >= 0),
    answer              TEXT,
    error               TEXT,
    settings            JSONB,
    -- V1 "self_evaluation 存储约定": a container of independently written slots, never overwritten whole.
    self_evaluation     JSONB NOT NULL DEFAULT '{}'
);

CREATE SEQUENCE tool_invocation_id_seq START 1;

CREATE TABLE tool_invocation (
    id                  BIGINT PRIMARY KEY DEFAULT nextval('tool_invocation_id_seq'),
    session_id          TEXT NOT NULL REFERENCES diagnosis_session (session_id),
    round               INTEGER NOT NULL CHECK (round >= 1),
    tool_name           TEXT NOT NULL,
    input               JSONB NOT NULL,
    output_preview      TEXT NOT NULL,
    output              TEXT NOT NULL,
    retrieval_details   JSONB,
    success             BOOLEAN NOT NULL,
    error               TEXT,
    is_evidence         BOOLEAN NOT NULL,
    started_at          TIMESTAMP NOT NULL,
    latency_ms          DOUBLE PRECISION NOT NULL CHECK (latency_ms >= 0)
);

CREATE SEQUENCE agent_step_id_seq START 1;

CREATE TABLE agent_step (
    id                  BIGINT PRIMARY KEY DEFAULT nextval('agent_step_id_seq'),
    session_id          TEXT NOT NULL REFERENCES diagnosis_session (session_id),
    round               INTEGER NOT NULL CHECK (round >= 1),
    agent               TEXT NOT NULL,
    thought             TEXT NOT NULL,
    model_output        TEXT NOT NULL,
    prompt_tokens       INTEGER NOT NULL CHECK (prompt_tokens >= 0),
    completion_tokens   INTEGER NOT NULL CHECK (completion_tokens >= 0),
    latency_ms          DOUBLE PRECISION NOT NULL CHECK (latency_ms >= 0),
    status              TEXT NOT NULL,
    error               TEXT,
    created_at          TIMESTAMP NOT NULL
);

-- Unlike DuckDB, PostgreSQL does not index the referencing side of a foreign key; every read is per session.
CREATE INDEX tool_invocation_session_idx ON tool_invocation (session_id, id);
CREATE INDEX agent_step_session_idx ON agent_step (session_id, id);
CREATE INDEX diagnosis_session_created_idx ON diagnosis_session (created_at DESC, session_id DESC);
