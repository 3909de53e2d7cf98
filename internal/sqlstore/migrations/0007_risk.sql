-- Risk limits and the kill switch (docs/contract.md 2.8, docs/risk.md).
-- Amounts are exact decimal text in USD; days are UTC dates (YYYY-MM-DD).

-- A client key's limits, as the JSON of exgate.RiskLimits.
CREATE TABLE risk_limits (
    api_key    TEXT    NOT NULL PRIMARY KEY,
    limits     TEXT    NOT NULL,
    updated_at {{int}} NOT NULL
);

-- The halts in force: one per client key, '*' for every key.
CREATE TABLE risk_halts (
    api_key    TEXT    NOT NULL PRIMARY KEY,
    reason     TEXT    NOT NULL,
    created_at {{int}} NOT NULL
);

-- One row per client key that has reserved anything: its open orders. Every
-- reservation and settlement of the key locks this row first (FOR UPDATE on
-- PostgreSQL; SQLite has one writer), so that concurrent orders of one key,
-- on any instance, take turns.
CREATE TABLE risk_keys (
    api_key     TEXT    NOT NULL PRIMARY KEY,
    open_orders {{int}} NOT NULL
);

-- A key's daily figures of one UTC day.
CREATE TABLE risk_usage (
    api_key    TEXT NOT NULL,
    day        TEXT NOT NULL,
    notional   TEXT NOT NULL,
    withdrawal TEXT NOT NULL,
    PRIMARY KEY (api_key, day)
);

-- What each intent holds of its key's figures, settled as its answer is
-- recorded.
CREATE TABLE risk_reservations (
    intent_id TEXT    NOT NULL PRIMARY KEY,
    api_key   TEXT    NOT NULL,
    day       TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    charge    TEXT    NOT NULL,
    quote     TEXT    NOT NULL,
    quote_usd TEXT    NOT NULL,
    price     TEXT    NOT NULL,
    is_open   {{int}} NOT NULL
);
