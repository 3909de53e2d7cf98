-- A client key created with `exgate keys create --legacy-signing` may send
-- state-changing requests without a signed timestamp (docs/signing.md).
ALTER TABLE client_keys ADD COLUMN legacy_signing BOOLEAN NOT NULL DEFAULT FALSE;
