-- exgate store schema, version 1 (SQLite). postgres/migrations/0001_init.sql
-- is the same schema in the PostgreSQL dialect; change both together.
-- Times are Unix nanoseconds (UTC). Secrets are AES-256-GCM sealed values
-- (internal/secretbox) bound to their row. Money is exact decimal text.

CREATE TABLE client_keys (
    api_key    TEXT    NOT NULL PRIMARY KEY,
    secret     BLOB    NOT NULL,
    label      TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);

CREATE TABLE credentials (
    -- AUTOINCREMENT: an id is never reused, so a new credential never
    -- inherits the paper balances of a removed one.
    id             INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    client_api_key TEXT    NOT NULL REFERENCES client_keys (api_key),
    name           TEXT    NOT NULL,
    exchange       TEXT    NOT NULL,
    exchange_key   TEXT    NOT NULL DEFAULT '',
    secret         BLOB    NOT NULL,
    passphrase     BLOB    NOT NULL,
    permissions    TEXT    NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL,
    UNIQUE (client_api_key, name)
);

CREATE TABLE intents (
    seq             INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    id              TEXT    NOT NULL UNIQUE,
    kind            TEXT    NOT NULL,
    client_api_key  TEXT    NOT NULL,
    credential_id   INTEGER NOT NULL,
    credential_name TEXT    NOT NULL,
    exchange        TEXT    NOT NULL,
    client_ref      TEXT    NOT NULL DEFAULT '',
    fingerprint     TEXT    NOT NULL DEFAULT '',
    request         BLOB,
    state           TEXT    NOT NULL,
    status          INTEGER NOT NULL DEFAULT 0,
    response        BLOB,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);

CREATE UNIQUE INDEX intents_client_ref ON intents (client_api_key, kind, client_ref)
    WHERE client_ref <> '';

CREATE INDEX intents_unfinished ON intents (created_at, seq)
    WHERE state <> 'final';

CREATE TABLE sim_accounts (
    credential_id INTEGER NOT NULL PRIMARY KEY
        REFERENCES credentials (id) ON DELETE CASCADE,
    created_at    INTEGER NOT NULL
);

CREATE TABLE sim_balances (
    credential_id INTEGER NOT NULL REFERENCES sim_accounts (credential_id) ON DELETE CASCADE,
    asset         TEXT    NOT NULL,
    amount        TEXT    NOT NULL CHECK (amount NOT LIKE '-%'),
    PRIMARY KEY (credential_id, asset)
);

CREATE TABLE sim_operations (
    credential_id INTEGER NOT NULL REFERENCES sim_accounts (credential_id) ON DELETE CASCADE,
    id            TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    changes       TEXT    NOT NULL,
    record        BLOB,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (credential_id, id)
);
