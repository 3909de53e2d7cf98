package client

import (
	"context"
	"net/http"
	"strconv"

	"github.com/exgate/exgate"
)

// MarketOrder is a market order to place. Empty fields are not sent (the
// gateway then names the missing one).
type MarketOrder struct {
	// Asset1 is the base and Asset2 the quote asset of the pair.
	Asset1, Asset2 string
	// Side is BUY or SELL, any case.
	Side string
	// Quantity is a positive decimal, sent as a JSON number when it is one
	// (0.1) and as a string otherwise.
	Quantity string
	// QuantityIn is the asset Quantity is expressed in: asset1, asset2 or
	// either asset's code, any case.
	QuantityIn string
	// ClientOrderID (1 to 64 of A-Z a-z 0-9 . _ : -) makes the order
	// idempotent: the same id again returns the first order.
	ClientOrderID string
	// Test checks the order and answers it with status TEST; nothing is
	// placed.
	Test bool
}

// PlaceMarketOrder places a market order (POST /v1/order/market). The
// exchange key needs the trade permission. An *Error with Code
// EXCHANGE_TIMEOUT means the outcome is unknown and the gateway is
// reconciling it; its Order field holds the PENDING order when the gateway
// recorded it. Read it again with Order.
func (c *Client) PlaceMarketOrder(ctx context.Context, o MarketOrder) (exgate.Order, error) {
	ps := params(
		"asset1", o.Asset1,
		"asset2", o.Asset2,
		"side", o.Side,
		"quantity", o.Quantity,
		"quantityIn", o.QuantityIn,
		"clientOrderId", o.ClientOrderID,
		"test", boolText(o.Test),
	)
	var out exgate.Order
	err := c.call(ctx, http.MethodPost, "/v1/order/market", ps, &out)
	return out, err
}

// OrderRef names an order by the gateway's ID or by the ClientOrderID it
// was placed with; give exactly one.
type OrderRef struct {
	ID, ClientOrderID string
}

// Order reads the current state of an order placed with this client key
// (GET /v1/order).
func (c *Client) Order(ctx context.Context, ref OrderRef) (exgate.Order, error) {
	var out exgate.Order
	err := c.call(ctx, http.MethodGet, "/v1/order", params("id", ref.ID, "clientOrderId", ref.ClientOrderID), &out)
	return out, err
}

// KlinesRequest asks for recent klines. Interval (1m 3m 5m 15m 30m 1h 2h
// 4h 6h 8h 12h 1d 3d 1w 1M) defaults to 1m and Limit (1 to 1000) to 100
// when zero.
type KlinesRequest struct {
	Asset1, Asset2 string
	Interval       string
	Limit          int
}

// RecentKlines returns klines ascending by open time, the last one possibly
// still open (GET /v1/market/recent-klines).
func (c *Client) RecentKlines(ctx context.Context, r KlinesRequest) ([]exgate.Kline, error) {
	ps := params("asset1", r.Asset1, "asset2", r.Asset2, "interval", r.Interval, "limit", limitText(r.Limit))
	var out []exgate.Kline
	err := c.call(ctx, http.MethodGet, "/v1/market/recent-klines", ps, &out)
	return out, err
}

// OrderBookRequest asks for an order book; Limit (1 to 1000 levels per
// side) defaults to 100 when zero.
type OrderBookRequest struct {
	Asset1, Asset2 string
	Limit          int
}

// OrderBook returns bids by price descending and asks ascending (GET
// /v1/market/order-book).
func (c *Client) OrderBook(ctx context.Context, r OrderBookRequest) (exgate.OrderBook, error) {
	ps := params("asset1", r.Asset1, "asset2", r.Asset2, "limit", limitText(r.Limit))
	var out exgate.OrderBook
	err := c.call(ctx, http.MethodGet, "/v1/market/order-book", ps, &out)
	return out, err
}

// AccountBalance returns every asset with a non-zero balance (GET
// /v1/wallet/account-balance).
func (c *Client) AccountBalance(ctx context.Context) ([]exgate.Balance, error) {
	var out []exgate.Balance
	err := c.call(ctx, http.MethodGet, "/v1/wallet/account-balance", nil, &out)
	return out, err
}

// DepositsFilter narrows RecentDeposits; empty fields match everything.
// Status is pending, completed, failed or canceled.
type DepositsFilter struct {
	Asset, Status string
}

// RecentDeposits returns deposits newest first (GET
// /v1/wallet/recent-deposits).
func (c *Client) RecentDeposits(ctx context.Context, f DepositsFilter) ([]exgate.Deposit, error) {
	var out []exgate.Deposit
	err := c.call(ctx, http.MethodGet, "/v1/wallet/recent-deposits", params("asset", f.Asset, "status", f.Status), &out)
	return out, err
}

// DepositAddress returns where to deposit asset on network (GET
// /v1/wallet/deposit).
func (c *Client) DepositAddress(ctx context.Context, asset, network string) (exgate.DepositAddress, error) {
	var out exgate.DepositAddress
	err := c.call(ctx, http.MethodGet, "/v1/wallet/deposit", params("asset", asset, "network", network), &out)
	return out, err
}

// WithdrawRequest is a withdrawal to submit. Empty fields are not sent.
type WithdrawRequest struct {
	Asset, Network, Address string
	// Amount is what the destination receives, a positive decimal sent as
	// a JSON number when it is one; the exchange's fee comes on top.
	Amount string
	// Tag is the memo or tag, for networks that use one.
	Tag string
	// ClientWithdrawalID makes the withdrawal idempotent, like
	// MarketOrder.ClientOrderID.
	ClientWithdrawalID string
}

// Withdraw submits a withdrawal (POST /v1/wallet/withdraw). The exchange
// key needs the withdraw permission. An *Error with Code EXCHANGE_TIMEOUT
// means the outcome is unknown; its Withdrawal field holds the pending
// withdrawal when the gateway recorded it. Read it again with Withdrawal.
func (c *Client) Withdraw(ctx context.Context, r WithdrawRequest) (exgate.Withdrawal, error) {
	ps := params(
		"asset", r.Asset,
		"network", r.Network,
		"address", r.Address,
		"amount", r.Amount,
		"tag", r.Tag,
		"clientWithdrawalId", r.ClientWithdrawalID,
	)
	var out exgate.Withdrawal
	err := c.call(ctx, http.MethodPost, "/v1/wallet/withdraw", ps, &out)
	return out, err
}

// WithdrawalRef names a withdrawal by the gateway's ID or by its
// ClientWithdrawalID; give exactly one.
type WithdrawalRef struct {
	ID, ClientWithdrawalID string
}

// Withdrawal reads the current state of a withdrawal submitted with this
// client key (GET /v1/wallet/withdrawal).
func (c *Client) Withdrawal(ctx context.Context, ref WithdrawalRef) (exgate.Withdrawal, error) {
	var out exgate.Withdrawal
	err := c.call(ctx, http.MethodGet, "/v1/wallet/withdrawal", params("id", ref.ID, "clientWithdrawalId", ref.ClientWithdrawalID), &out)
	return out, err
}

// params turns name, value pairs into parameters, leaving out empty values.
func params(pairs ...string) []Param {
	out := make([]Param, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			out = append(out, Param{Name: pairs[i], Value: pairs[i+1]})
		}
	}
	return out
}

func limitText(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
