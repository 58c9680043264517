-- Session liveness on PostgreSQL: the same columns as ../0002_session_owner.sql (DuckDB).

ALTER TABLE diagnosis_session ADD COLUMN owner_host TEXT;
ALTER TABLE diagnosis_session ADD COLUMN owner_pid INTEGER;
ALTER TABLE diagnosis_session ADD COLUMN owner_started TEXT;
ALTER TABLE diagnosis_session ADD COLUMN heartbeat_at TIMESTAMP;

-- Every store that opens read-write looks for running sessions: keep that a small index scan.
CREATE INDEX diagnosis_session_running_idx ON diagnosis_session (session_id) WHERE status = 'running';
