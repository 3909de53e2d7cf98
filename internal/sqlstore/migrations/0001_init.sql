-- exgate store schema, version 1, for both databases: before it runs, the
-- dialect (sqlstore.Dialect.Types) replaces {{int}} (a 64-bit integer),
-- {{bytes}} (a byte string) and {{serial}} (an integer primary key the
-- database assigns, never reusing one).
-- Times are Unix nanoseconds (UTC). Secrets are AES-256-GCM sealed values
-- (internal/secretbox) bound to their row. Money is exact decimal text.

CREATE TABLE client_keys (
    api_key    TEXT    NOT NULL PRIMARY KEY,
    secret     {{bytes}} NOT NULL,
    label      TEXT    NOT NULL DEFAULT '',
    created_at {{int}} NOT NULL,
    revoked_at {{int}}
);

CREATE TABLE credentials (
    -- The database assigns ids and never reuses one, so a new credential never
    -- inherits the paper balances of a removed one.
    id             {{serial}},
    client_api_key TEXT    NOT NULL REFERENCES client_keys (api_key),
    name           TEXT    NOT NULL,
    exchange       TEXT    NOT NULL,
    exchange_key   TEXT    NOT NULL DEFAULT '',
    secret         {{bytes}} NOT NULL,
    passphrase     {{bytes}} NOT NULL,
    permissions    TEXT    NOT NULL DEFAULT '',
    created_at     {{int}} NOT NULL,
    UNIQUE (client_api_key, name)
);

CREATE TABLE intents (
    seq             {{serial}},
    id              TEXT    NOT NULL UNIQUE,
    kind            TEXT    NOT NULL,
    client_api_key  TEXT    NOT NULL,
    credential_id   {{int}} NOT NULL,
    credential_name TEXT    NOT NULL,
    exchange        TEXT    NOT NULL,
    client_ref      TEXT    NOT NULL DEFAULT '',
    fingerprint     TEXT    NOT NULL DEFAULT '',
    request         {{bytes}},
    state           TEXT    NOT NULL,
    status          INTEGER NOT NULL DEFAULT 0,
    response        {{bytes}},
    created_at      {{int}} NOT NULL,
    updated_at      {{int}} NOT NULL
);

CREATE UNIQUE INDEX intents_client_ref ON intents (client_api_key, kind, client_ref)
    WHERE client_ref <> '';

CREATE INDEX intents_unfinished ON intents (created_at, seq)
    WHERE state <> 'final';

CREATE TABLE sim_accounts (
    credential_id {{int}} NOT NULL PRIMARY KEY
        REFERENCES credentials (id) ON DELETE CASCADE,
    created_at    {{int}} NOT NULL
);

CREATE TABLE sim_balances (
    credential_id {{int}} NOT NULL REFERENCES sim_accounts (credential_id) ON DELETE CASCADE,
    asset         TEXT    NOT NULL,
    amount        TEXT    NOT NULL CHECK (amount NOT LIKE '-%'),
    PRIMARY KEY (credential_id, asset)
);

CREATE TABLE sim_operations (
    credential_id {{int}} NOT NULL REFERENCES sim_accounts (credential_id) ON DELETE CASCADE,
    id            TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    changes       TEXT    NOT NULL,
    record        {{bytes}},
    created_at    {{int}} NOT NULL,
    PRIMARY KEY (credential_id, id)
);
