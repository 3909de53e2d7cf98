-- The running gateways' heartbeats (docs/contract.md section 4): an instance
-- started with --single-instance refuses to start while another is live on
-- the same store. instance_lock's one row is locked by the transaction
-- that checks and records an instance, so that two starting together take
-- turns.
CREATE TABLE gateway_instances (
    id           TEXT    NOT NULL PRIMARY KEY,
    host         TEXT    NOT NULL DEFAULT '',
    pid          {{int}} NOT NULL DEFAULT 0,
    single       INTEGER NOT NULL DEFAULT 0,
    shared_state TEXT    NOT NULL DEFAULT '',
    started_at   {{int}} NOT NULL,
    heartbeat_at {{int}} NOT NULL
);

CREATE TABLE instance_lock (
    id INTEGER NOT NULL PRIMARY KEY
);

INSERT INTO instance_lock (id) VALUES (1);
