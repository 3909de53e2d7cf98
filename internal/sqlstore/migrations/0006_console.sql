-- The web console (docs/contract.md 2.7): one-time login links and
-- sessions, kept in the store so that a link made by `exgate console-login`
-- works on every instance. Only SHA-256 hashes (hex) of the link tokens and
-- session ids are stored.

CREATE TABLE console_logins (
    token_hash TEXT    NOT NULL PRIMARY KEY,
    created_at {{int}} NOT NULL,
    expires_at {{int}} NOT NULL,
    used_at    {{int}}
);

CREATE TABLE console_sessions (
    id_hash    TEXT    NOT NULL PRIMARY KEY,
    created_at {{int}} NOT NULL,
    expires_at {{int}} NOT NULL
);

-- The console lists an exchange key's orders and withdrawals, newest first.
CREATE INDEX intents_credential ON intents (credential_id, kind, created_at);
