-- Transfers between an account's wallets (docs/contract.md 2.10).
--
-- The simulated exchange's paper balances gain a wallet: spot (every
-- balance before this migration) or funding. The table is rebuilt under
-- its own name, since the primary key gains the wallet.
CREATE TABLE sim_wallet_balances (
    credential_id {{int}} NOT NULL REFERENCES sim_accounts (credential_id) ON DELETE CASCADE,
    wallet        TEXT    NOT NULL,
    asset         TEXT    NOT NULL,
    amount        TEXT    NOT NULL CHECK (amount NOT LIKE '-%'),
    PRIMARY KEY (credential_id, wallet, asset)
);

INSERT INTO sim_wallet_balances (credential_id, wallet, asset, amount)
    SELECT credential_id, 'spot', asset, amount FROM sim_balances;

DROP TABLE sim_balances;

ALTER TABLE sim_wallet_balances RENAME TO sim_balances;

-- A transfer intent holds a key (exchange key, asset, amount) while its
-- outcome is open, so that no two transfers of the same asset and amount
-- of one exchange key are in flight at once and an exchange without
-- client transfer ids (Binance) can be reconciled by matching them in its
-- history. Of several instances racing, the index lets one through.
ALTER TABLE intents ADD COLUMN exclusive TEXT NOT NULL DEFAULT '';

CREATE UNIQUE INDEX intents_exclusive ON intents (exclusive)
    WHERE exclusive <> '' AND state IN ('submitting', 'unknown');
