-- Session liveness: who runs a session and when it last showed it was alive. A process killed with -9 cannot
-- mark its sessions; a store opened later marks a `running` session whose owner is gone `interrupted`
-- (evigate/store/liveness.py). Rows written before this migration have no owner (NULL).
-- owner_started: the owner's boot id, pid namespace and start time, so a reused pid is not taken for the owner.

ALTER TABLE diagnosis_session ADD COLUMN owner_host VARCHAR;
ALTER TABLE diagnosis_session ADD COLUMN owner_pid INTEGER;
ALTER TABLE diagnosis_session ADD COLUMN owner_started VARCHAR;
ALTER TABLE diagnosis_session ADD COLUMN heartbeat_at TIMESTAMP;
