package client

import (
	"context"
	"net/http"

	"github.com/exgate/exgate"
)

// LimitOrder is a limit order to place (docs/contract.md 2.4). Empty fields are
// not sent.
type LimitOrder struct {
	// Asset1 is the base and Asset2 the quote asset of the pair.
	Asset1, Asset2 string
	// Side is BUY or SELL, any case.
	Side string
	// Quantity is in Asset1, Price in Asset2 per Asset1: positive
	// decimals, sent as JSON numbers when they are valid ones.
	Quantity, Price string
	// TimeInForce is GTC (the default), IOC or FOK.
	TimeInForce string
	// PostOnly refuses an order that would trade at once (GTC only).
	PostOnly bool
	// ClientOrderID makes the order idempotent, as MarketOrder's.
	ClientOrderID string
	// Test checks the order and answers it with status TEST; nothing is
	// placed.
	Test bool
}

// PlaceLimitOrder places a limit order (POST /v1/order/limit); errors as
// PlaceMarketOrder's.
func (c *Client) PlaceLimitOrder(ctx context.Context, o LimitOrder) (exgate.Order, error) {
	ps := params(
		"asset1", o.Asset1,
		"asset2", o.Asset2,
		"side", o.Side,
		"quantity", o.Quantity,
		"price", o.Price,
		"timeInForce", o.TimeInForce,
		"postOnly", boolText(o.PostOnly),
		"clientOrderId", o.ClientOrderID,
		"test", boolText(o.Test),
	)
	var out exgate.Order
	err := c.call(ctx, http.MethodPost, "/v1/order/limit", ps, &out)
	return out, err
}

// CancelOrder cancels an order (POST /v1/order/cancel) and returns it:
// CANCELED, or its final status when it ended first. An *Error with Code
// NOT_FOUND means no such order for this client and exchange key.
func (c *Client) CancelOrder(ctx context.Context, ref OrderRef) (exgate.Order, error) {
	var out exgate.Order
	err := c.call(ctx, http.MethodPost, "/v1/order/cancel", params("id", ref.ID, "clientOrderId", ref.ClientOrderID), &out)
	return out, err
}

// CancelAll cancels every open order of a pair (POST
// /v1/order/cancel-all) and returns them.
func (c *Client) CancelAll(ctx context.Context, asset1, asset2 string) ([]exgate.Order, error) {
	var out []exgate.Order
	err := c.call(ctx, http.MethodPost, "/v1/order/cancel-all", params("asset1", asset1, "asset2", asset2), &out)
	return out, err
}

// OpenOrders returns the open orders, of one pair when asset1 and asset2
// are not empty (GET /v1/order/open).
func (c *Client) OpenOrders(ctx context.Context, asset1, asset2 string) ([]exgate.Order, error) {
	var out []exgate.Order
	err := c.call(ctx, http.MethodGet, "/v1/order/open", params("asset1", asset1, "asset2", asset2), &out)
	return out, err
}

// HistoryRequest names a pair and how many records to return (1 to 500,
// 100 when zero).
type HistoryRequest struct {
	Asset1, Asset2 string
	Limit          int
}

// RecentOrders returns a pair's orders, newest first (GET
// /v1/order/recent).
func (c *Client) RecentOrders(ctx context.Context, r HistoryRequest) ([]exgate.Order, error) {
	var out []exgate.Order
	err := c.call(ctx, http.MethodGet, "/v1/order/recent", params("asset1", r.Asset1, "asset2", r.Asset2, "limit", limitText(r.Limit)), &out)
	return out, err
}

// Fills returns a pair's fills, newest first (GET /v1/order/fills).
func (c *Client) Fills(ctx context.Context, r HistoryRequest) ([]exgate.Fill, error) {
	var out []exgate.Fill
	err := c.call(ctx, http.MethodGet, "/v1/order/fills", params("asset1", r.Asset1, "asset2", r.Asset2, "limit", limitText(r.Limit)), &out)
	return out, err
}

// RecentWithdrawals returns withdrawals newest first, of one asset and
// status when not empty (GET /v1/wallet/recent-withdraws).
func (c *Client) RecentWithdrawals(ctx context.Context, asset, status string) ([]exgate.Withdrawal, error) {
	var out []exgate.Withdrawal
	err := c.call(ctx, http.MethodGet, "/v1/wallet/recent-withdraws", params("asset", asset, "status", status), &out)
	return out, err
}

// Symbols returns the exchange's markets, or one when asset1 and asset2
// are not empty (GET /v1/market/symbols).
func (c *Client) Symbols(ctx context.Context, asset1, asset2 string) ([]exgate.SymbolInfo, error) {
	var out []exgate.SymbolInfo
	err := c.call(ctx, http.MethodGet, "/v1/market/symbols", params("asset1", asset1, "asset2", asset2), &out)
	return out, err
}

// AccountRisk returns the calling key's risk limits, today's usage and
// halt (GET /v1/account/risk; docs/risk.md).
func (c *Client) AccountRisk(ctx context.Context) (exgate.RiskAccount, error) {
	var out exgate.RiskAccount
	err := c.call(ctx, http.MethodGet, "/v1/account/risk", nil, &out)
	return out, err
}

// boolText is "true" for true and empty (not sent) for false.
func boolText(b bool) string {
	if b {
		return "true"
	}
	return ""
}
