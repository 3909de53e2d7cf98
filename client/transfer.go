package client

import (
	"context"
	"net/http"

	"github.com/exgate/exgate"
)

// Transfers between an account's wallets (docs/contract.md 2.10): spot,
// the trading wallet, and funding, where some exchanges land deposits and
// take withdrawals from.

// WalletBalance returns every asset with a non-zero balance in one wallet,
// "spot" or "funding" (GET /v1/wallet/account-balance?wallet=...). An
// exchange with one wallet answers 400 INVALID_PARAMETER naming wallet
// for funding.
func (c *Client) WalletBalance(ctx context.Context, wallet string) ([]exgate.Balance, error) {
	var out []exgate.Balance
	err := c.call(ctx, http.MethodGet, "/v1/wallet/account-balance", params("wallet", wallet), &out)
	return out, err
}

// TransferRequest is a transfer to submit. Empty fields are not sent.
type TransferRequest struct {
	Asset string
	// Amount is a positive decimal, sent as a JSON number when it is one.
	Amount string
	// From and To are "spot" or "funding", and differ.
	From, To string
	// ClientTransferID makes the transfer idempotent, like
	// MarketOrder.ClientOrderID; without one the gateway's id is the
	// transfer's clientTransferId.
	ClientTransferID string
}

// Transfer moves funds between the account's wallets (POST
// /v1/wallet/transfer). The exchange key needs the trade permission. An
// *Error with Code EXCHANGE_TIMEOUT means the outcome is unknown; its
// Transfer field holds the pending transfer when the gateway recorded it.
// Read it again with TransferByRef, or send the same
// request with the same ClientTransferID: it is never sent twice.
// TRANSFER_IN_FLIGHT (409) means a transfer of the same asset and amount
// on the exchange key is still being reconciled; nothing was sent.
func (c *Client) Transfer(ctx context.Context, r TransferRequest) (exgate.Transfer, error) {
	ps := params(
		"asset", r.Asset,
		"amount", r.Amount,
		"from", r.From,
		"to", r.To,
		"clientTransferId", r.ClientTransferID,
	)
	var out exgate.Transfer
	err := c.call(ctx, http.MethodPost, "/v1/wallet/transfer", ps, &out)
	return out, err
}

// TransferRef names a transfer by the gateway's ID or by its
// ClientTransferID; give exactly one.
type TransferRef struct {
	ID, ClientTransferID string
}

// TransferByRef reads the current state of a transfer submitted with this
// client key (GET /v1/wallet/transfer).
func (c *Client) TransferByRef(ctx context.Context, ref TransferRef) (exgate.Transfer, error) {
	var out exgate.Transfer
	err := c.call(ctx, http.MethodGet, "/v1/wallet/transfer", params("id", ref.ID, "clientTransferId", ref.ClientTransferID), &out)
	return out, err
}

// RecentTransfers returns the exchange's transfers between the wallets,
// newest first, of asset when it is not empty (GET /v1/wallet/transfers).
func (c *Client) RecentTransfers(ctx context.Context, asset string) ([]exgate.Transfer, error) {
	var out []exgate.Transfer
	err := c.call(ctx, http.MethodGet, "/v1/wallet/transfers", params("asset", asset), &out)
	return out, err
}
