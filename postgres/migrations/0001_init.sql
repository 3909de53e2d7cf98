-- exgate store schema, version 1 (PostgreSQL). sqlite/migrations/0001_init.sql
-- is the same schema in the SQLite dialect; change both together.
-- Times are Unix nanoseconds (UTC). Secrets are AES-256-GCM sealed values
-- (internal/secretbox) bound to their row. Money is exact decimal text.

CREATE TABLE client_keys (
    api_key    TEXT    NOT NULL PRIMARY KEY,
    secret     BYTEA   NOT NULL,
    label      TEXT    NOT NULL DEFAULT '',
    created_at BIGINT  NOT NULL,
    revoked_at BIGINT
);

CREATE TABLE credentials (
    -- An identity: an id is never reused, so a new credential never
    -- inherits the paper balances of a removed one.
    id             BIGINT  NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_api_key TEXT    NOT NULL REFERENCES client_keys (api_key),
    name           TEXT    NOT NULL,
    exchange       TEXT    NOT NULL,
    exchange_key   TEXT    NOT NULL DEFAULT '',
    secret         BYTEA   NOT NULL,
    passphrase     BYTEA   NOT NULL,
    permissions    TEXT    NOT NULL DEFAULT '',
    created_at     BIGINT  NOT NULL,
    UNIQUE (client_api_key, name)
);

CREATE TABLE intents (
    seq             BIGINT  NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              TEXT    NOT NULL UNIQUE,
    kind            TEXT    NOT NULL,
    client_api_key  TEXT    NOT NULL,
    credential_id   BIGINT  NOT NULL,
    credential_name TEXT    NOT NULL,
    exchange        TEXT    NOT NULL,
    client_ref      TEXT    NOT NULL DEFAULT '',
    fingerprint     TEXT    NOT NULL DEFAULT '',
    request         BYTEA,
    state           TEXT    NOT NULL,
    status          INTEGER NOT NULL DEFAULT 0,
    response        BYTEA,
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL
);

CREATE UNIQUE INDEX intents_client_ref ON intents (client_api_key, kind, client_ref)
    WHERE client_ref <> '';

CREATE INDEX intents_unfinished ON intents (created_at, seq)
    WHERE state <> 'final';

CREATE TABLE sim_accounts (
    credential_id BIGINT  NOT NULL PRIMARY KEY
        REFERENCES credentials (id) ON DELETE CASCADE,
    created_at    BIGINT  NOT NULL
);

CREATE TABLE sim_balances (
    credential_id BIGINT  NOT NULL REFERENCES sim_accounts (credential_id) ON DELETE CASCADE,
    asset         TEXT    NOT NULL,
    amount        TEXT    NOT NULL CHECK (amount NOT LIKE '-%'),
    PRIMARY KEY (credential_id, asset)
);

CREATE TABLE sim_operations (
    credential_id BIGINT  NOT NULL REFERENCES sim_accounts (credential_id) ON DELETE CASCADE,
    id            TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    changes       TEXT    NOT NULL,
    record        BYTEA,
    created_at    BIGINT  NOT NULL,
    PRIMARY KEY (credential_id, id)
);
