-- The operator's controls (docs/contract.md 2.6): client IP allowlists, exchange
-- key withdrawal allowlists, the audit trail and the master key check.

-- A client key's IP allowlist: comma-separated CIDR prefixes. No row: every
-- address is allowed.
CREATE TABLE client_key_ips (
    api_key    TEXT    NOT NULL PRIMARY KEY REFERENCES client_keys (api_key),
    prefixes   TEXT    NOT NULL,
    updated_at {{int}} NOT NULL
);

-- An exchange key's withdrawal allowlist. Entries belong to the exchange
-- key's name, so that replacing a credential (remove, then add under the
-- same name) keeps its allowlist; a denied entry is kept (denied_at set)
-- so that an exchange key that had an allowlist never silently loses it.
CREATE TABLE withdrawal_addresses (
    client_api_key  TEXT    NOT NULL,
    credential_name TEXT    NOT NULL,
    asset           TEXT    NOT NULL,
    network         TEXT    NOT NULL,
    address         TEXT    NOT NULL,
    tag             TEXT    NOT NULL DEFAULT '',
    usable_from     {{int}} NOT NULL,
    created_at      {{int}} NOT NULL,
    denied_at       {{int}},
    PRIMARY KEY (client_api_key, credential_name, asset, network, address, tag)
);

-- The audit trail: appended to, never updated or deleted by the store.
-- details is a JSON object of strings; never a secret or a signature.
CREATE TABLE audit_log (
    seq          {{serial}},
    at           {{int}} NOT NULL,
    actor        TEXT    NOT NULL,
    action       TEXT    NOT NULL,
    api_key      TEXT    NOT NULL DEFAULT '',
    exchange_key TEXT    NOT NULL DEFAULT '',
    details      TEXT    NOT NULL DEFAULT '',
    status       INTEGER NOT NULL DEFAULT 0,
    code         TEXT    NOT NULL DEFAULT '',
    intent_id    TEXT    NOT NULL DEFAULT '',
    request_id   TEXT    NOT NULL DEFAULT '',
    remote       TEXT    NOT NULL DEFAULT ''
);

CREATE INDEX audit_log_api_key ON audit_log (api_key, seq);

-- Values the store keeps about itself; 'master_key_check' is a known text
-- sealed under the master key, so that a wrong key is noticed at start.
CREATE TABLE store_meta (
    name  TEXT      NOT NULL PRIMARY KEY,
    value {{bytes}} NOT NULL
);
