-- Paper keys (docs/contract.md 2.9): a credential of a real exchange with
-- no exchange key, whose orders, balances and transfers the gateway
-- simulates in the sim ledger; paper_balances are its starting balances
-- ("BTC=1,USDT=10000", empty: sim's).
ALTER TABLE credentials ADD COLUMN paper BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE credentials ADD COLUMN paper_balances TEXT NOT NULL DEFAULT '';
