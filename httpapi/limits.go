package httpapi

import (
	"context"
	"strings"
	"time"

	"github.com/exgate/exgate"
)

// RouteLimits are each client key's budgets per kind of route, taken on
// top of Config.ClientLimit (the budget of every signed request). A zero
// Rate is no limit. They are kept in the same limiter as the client limit,
// so instances sharing Redis share them.
type RouteLimits struct {
	// MarketData: GET /v1/market/… (klines, order book, symbols).
	MarketData exgate.RateLimit
	// Orders: every POST /v1/order/… (market and limit orders, test
	// orders, cancels, cancel-all).
	Orders exgate.RateLimit
	// Withdrawals: POST /v1/wallet/withdraw and POST
	// /v1/wallet/transfer (the routes that move money).
	Withdrawals exgate.RateLimit
}

// DefaultRouteLimits are the original service's published cloud limits:
// market data 200, orders 100 and withdrawals 10 per 10 s per client key.
func DefaultRouteLimits() RouteLimits {
	return RouteLimits{
		MarketData:  exgate.RateLimit{Rate: 200, Period: 10 * time.Second, Burst: 200},
		Orders:      exgate.RateLimit{Rate: 100, Period: 10 * time.Second, Burst: 100},
		Withdrawals: exgate.RateLimit{Rate: 10, Period: 10 * time.Second, Burst: 10},
	}
}

// LimitClass is the per-client budget a route takes (a column of the
// route table, routes.go). The zero value is no class, which the
// route-table test refuses: every route names one, and every POST route
// one of its own kind.
type LimitClass int

const (
	// LimitNone: a public route, no client key to count.
	LimitNone LimitClass = iota + 1
	// LimitClient: only the client key's budget (Config.ClientLimit).
	LimitClient
	// LimitMarketData: RouteLimits.MarketData.
	LimitMarketData
	// LimitOrders: RouteLimits.Orders.
	LimitOrders
	// LimitWithdrawals: RouteLimits.Withdrawals.
	LimitWithdrawals
)

// String names the class as a refusal and the limiter key do.
func (c LimitClass) String() string {
	switch c {
	case LimitNone:
		return "none"
	case LimitClient:
		return "client"
	case LimitMarketData:
		return "market data"
	case LimitOrders:
		return "orders"
	case LimitWithdrawals:
		return "withdrawals"
	}
	return "unset"
}

// routeLimit is the budget of a route's class; ok is false for routes
// with only the client limit, or whose budget is zero (no limit).
func (l RouteLimits) routeLimit(c LimitClass) (limit exgate.RateLimit, ok bool) {
	switch c {
	case LimitMarketData:
		limit = l.MarketData
	case LimitOrders:
		limit = l.Orders
	case LimitWithdrawals:
		limit = l.Withdrawals
	}
	return limit, limit.Rate > 0
}

// checkClientLimits takes one request from the client key's budget and
// from its route's budget, or answers 429 with Retry-After. It runs before
// the replay guard, so that a refused request does not use up its
// signature (docs/contract.md 2.1).
func (s *Server) checkClientLimits(ctx context.Context, apiKey, pattern string) error {
	if s.cfg.ClientLimit.Rate > 0 {
		if err := s.reserve(ctx, "client:"+apiKey, s.cfg.ClientLimit, "its limit"); err != nil {
			return err
		}
	}
	class := s.limits[pattern]
	if limit, ok := s.cfg.RouteLimits.routeLimit(class); ok {
		name := class.String()
		if err := s.reserve(ctx, "client:"+apiKey+":"+strings.ReplaceAll(name, " ", "-"), limit, "its "+name+" limit"); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) reserve(ctx context.Context, key string, limit exgate.RateLimit, what string) error {
	wait, err := s.cfg.Limiter.Reserve(ctx, key, 1, limit)
	if err != nil {
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "the rate limiter is unreachable", RetryAfter: time.Second, Err: err}
	}
	if wait > 0 {
		return &exgate.Error{Code: exgate.CodeRateLimited, RetryAfter: wait,
			Detail: "this API key is over " + what + " of " + rateText(limit)}
	}
	return nil
}
