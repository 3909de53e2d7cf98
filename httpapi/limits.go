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
	// Withdrawals: POST /v1/wallet/withdraw.
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

// routeLimit is the budget of the route pattern ("POST /v1/order/limit"),
// with the name of its limiter key and of the limit in a refusal; ok is
// false for routes with only the client limit.
func (l RouteLimits) routeLimit(pattern string) (limit exgate.RateLimit, name string, ok bool) {
	switch {
	case strings.HasPrefix(pattern, "GET /v1/market/"):
		return l.MarketData, "market data", l.MarketData.Rate > 0
	case strings.HasPrefix(pattern, "POST /v1/order/"):
		return l.Orders, "orders", l.Orders.Rate > 0
	case pattern == "POST /v1/wallet/withdraw":
		return l.Withdrawals, "withdrawals", l.Withdrawals.Rate > 0
	}
	return exgate.RateLimit{}, "", false
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
	if limit, name, ok := s.cfg.RouteLimits.routeLimit(pattern); ok {
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
