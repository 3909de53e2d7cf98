-- Fewer statements on the order path (docs/risk.md): the day's figures move
-- onto the client key's risk_keys row, so that a reservation locks, reads and
-- writes one row (day is the UTC date notional and withdrawal count for; a
-- reservation on a later day starts them afresh; only the current day's
-- figures are kept), and an intent's reservation is a column of the intent
-- itself (JSON, NULL without one), written by the INSERT that records the
-- intent and returned by the UPDATE that records its answer.
ALTER TABLE risk_keys ADD COLUMN day TEXT NOT NULL DEFAULT '';
ALTER TABLE risk_keys ADD COLUMN notional TEXT NOT NULL DEFAULT '0';
ALTER TABLE risk_keys ADD COLUMN withdrawal TEXT NOT NULL DEFAULT '0';
DROP TABLE risk_usage;
DROP TABLE risk_reservations;
ALTER TABLE intents ADD COLUMN risk TEXT;
