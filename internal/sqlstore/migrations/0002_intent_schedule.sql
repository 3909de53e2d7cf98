-- Each unfinished intent carries its own next reconciliation time and the
-- number of reconciliation reads so far (for its backoff), so that intents
-- that can never progress do not keep newer ones from being reconciled.
ALTER TABLE intents ADD COLUMN next_due {{int}} NOT NULL DEFAULT 0;
ALTER TABLE intents ADD COLUMN attempts {{int}} NOT NULL DEFAULT 0;

-- Intents recorded before this migration are due at once, oldest first.
UPDATE intents SET next_due = created_at WHERE state <> 'final';

CREATE INDEX intents_due ON intents (next_due, seq)
    WHERE state <> 'final';
