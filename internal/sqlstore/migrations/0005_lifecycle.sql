-- The order lifecycle of the simulated exchange (docs/contract.md 2.4 and 3).
-- A resting limit order is a sim operation applied with Open: it is listed
-- here until the operation that fills or cancels its rest closes it, in
-- the same transaction. Recent orders, fills and withdrawals are read by
-- kind, newest first.

CREATE TABLE sim_open_operations (
    credential_id {{int}} NOT NULL REFERENCES sim_accounts (credential_id) ON DELETE CASCADE,
    id            TEXT    NOT NULL,
    created_at    {{int}} NOT NULL,
    PRIMARY KEY (credential_id, id)
);

CREATE INDEX sim_operations_kind ON sim_operations (credential_id, kind, created_at);
