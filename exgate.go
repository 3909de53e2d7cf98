// Package exgate is the domain of the exgate exchange gateway: the
// normalized records every exchange answers with, the Exchange contract that
// every adapter implements, and the stable error codes of the HTTP API.
//
// The package depends only on the standard library and an exact decimal
// type. Adapters (exchange/...), stores (sqlite, postgres), shared state
// (redis) and the HTTP API (httpapi) import it and never each other; only
// cmd/internal/gateway wires them together. An adapter's optional
// abilities are found through any wrapper by Ability.
package exgate

import "context"

// Exchange is what every exchange adapter implements. All methods take the
// exchange credential the client named in X-API-EXCHANGE-KEY, even the
// market-data ones, so that pacing and the simulated exchange can be keyed by
// account. Requests have been validated by the caller: symbols are
// upper-case, quantities positive, intervals and limits within range.
//
// Errors are *Error values with one of the codes in errors.go when the
// exchange (or the adapter's local check of its rules) refused the request;
// anything else is treated as EXCHANGE_ERROR. An adapter returns
// CodeExchangeTimeout when the outcome of an order or withdrawal is unknown.
type Exchange interface {
	// Name is the exchange's name in configuration and credentials, as
	// its adapter registers it (package exchange).
	Name() string

	OrderPlacer
	MarketData
	Wallet
}

// OrderPlacer places market orders and looks them up again by the gateway's
// client order id.
type OrderPlacer interface {
	// PlaceMarketOrder sends one market order carrying req.ClientOrderID.
	// It is never retried by the adapter. Returns QUANTITY_TOO_SMALL,
	// INSUFFICIENT_FUNDS, UNKNOWN_SYMBOL, ORDER_REJECTED, EXCHANGE_TIMEOUT
	// (outcome unknown), EXCHANGE_UNAVAILABLE, EXCHANGE_AUTH_FAILED.
	PlaceMarketOrder(ctx context.Context, cred Credential, req OrderRequest) (Order, error)

	// QueryOrder reads an order back by the client order id that
	// PlaceMarketOrder sent. Returns an error wrapping ErrNotFound when the
	// exchange has no order with that id.
	QueryOrder(ctx context.Context, cred Credential, q OrderQuery) (Order, error)
}

// MarketData reads public market data.
type MarketData interface {
	// RecentKlines returns at most req.Limit klines ascending by OpenTime,
	// the last one possibly still open.
	RecentKlines(ctx context.Context, cred Credential, req KlineRequest) ([]Kline, error)
	// OrderBook returns at most req.Limit levels per side, bids descending
	// and asks ascending by price.
	OrderBook(ctx context.Context, cred Credential, req OrderBookRequest) (OrderBook, error)
}

// Wallet reads balances and moves funds.
type Wallet interface {
	// Balances returns every asset with a non-zero available or locked
	// amount.
	Balances(ctx context.Context, cred Credential) ([]Balance, error)
	// RecentDeposits returns deposits newest first, filtered by the
	// optional asset and status.
	RecentDeposits(ctx context.Context, cred Credential, f DepositFilter) ([]Deposit, error)
	// DepositAddress returns the address for an asset on a network.
	DepositAddress(ctx context.Context, cred Credential, req DepositAddressRequest) (DepositAddress, error)
	// Withdraw submits one withdrawal carrying req.ClientWithdrawalID. It
	// is never retried by the adapter. Returns INSUFFICIENT_FUNDS,
	// WITHDRAWAL_REJECTED, INVALID_PARAMETER (bad address or network),
	// EXCHANGE_TIMEOUT (outcome unknown) and the exchange errors.
	Withdraw(ctx context.Context, cred Credential, req WithdrawalRequest) (Withdrawal, error)
	// QueryWithdrawal reads a withdrawal back by the client withdrawal id
	// (or the exchange's id in q.ExchangeID when known). Returns an error
	// wrapping ErrNotFound when the exchange has no such withdrawal.
	QueryWithdrawal(ctx context.Context, cred Credential, q WithdrawalQuery) (Withdrawal, error)
}

// WithdrawalChecker is an optional ability (found with Ability) of an
// exchange that can tell without calling anyone that a withdrawal's
// parameters are malformed (an address not of the network's format, a tag
// where the network has none). The journal asks it before it records a
// withdrawal, so that bad input is refused before anything is recorded
// (docs/orders.md). It returns INVALID_PARAMETER naming the parameter, or
// nil; the exchange's own rules (minimums, funds) are Withdraw's.
type WithdrawalChecker interface {
	CheckWithdrawal(ctx context.Context, cred Credential, req WithdrawalRequest) error
}
