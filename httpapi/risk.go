package httpapi

import (
	"context"
	"net/http"

	"github.com/exgate/exgate"
)

// riskGate is the risk engine (package risk; docs/risk.md) as the API uses
// it: the checks of an order or withdrawal before the journal records it,
// each returning the context that carries the reservation to make with the
// intent (or the refusal), and a key's risk state.
type riskGate interface {
	CheckMarketOrder(ctx context.Context, cred exgate.Credential, ex exgate.Exchange, req exgate.OrderRequest, test bool) (context.Context, error)
	CheckLimitOrder(ctx context.Context, cred exgate.Credential, ex exgate.Exchange, req exgate.LimitOrderRequest, test bool) (context.Context, error)
	CheckWithdrawal(ctx context.Context, cred exgate.Credential, ex exgate.Exchange, req exgate.WithdrawalRequest) (context.Context, error)
	Account(ctx context.Context, apiKey string) (exgate.RiskAccount, error)
}

// riskObserver is what the API reports to metrics of the risk controls:
// each refusal by limit ("halted" for TRADING_HALTED).
type riskObserver interface {
	RiskRefused(limit string)
}

// riskOrder is the order a route is about to journal: one of the two.
type riskOrder struct {
	market *exgate.OrderRequest
	limit  *exgate.LimitOrderRequest
}

// checkOrderRisk runs the risk checks of an order (none without
// Config.Risk). A route that must not be halted (a transfer between a
// key's own wallets) simply does not call it.
func (s *Server) checkOrderRisk(ctx context.Context, c *call, o riskOrder, test bool) (context.Context, error) {
	if s.cfg.Risk == nil {
		return ctx, nil
	}
	if o.limit != nil {
		return s.cfg.Risk.CheckLimitOrder(ctx, c.cred, c.ex, *o.limit, test)
	}
	return s.cfg.Risk.CheckMarketOrder(ctx, c.cred, c.ex, *o.market, test)
}

// checkWithdrawalRisk runs the risk checks of a withdrawal.
func (s *Server) checkWithdrawalRisk(ctx context.Context, c *call, req exgate.WithdrawalRequest) (context.Context, error) {
	if s.cfg.Risk == nil {
		return ctx, nil
	}
	return s.cfg.Risk.CheckWithdrawal(ctx, c.cred, c.ex, req)
}

// noteRiskRefusal counts a refusal of the risk controls.
func (s *Server) noteRiskRefusal(e *exgate.Error) {
	if s.cfg.RiskMetrics == nil {
		return
	}
	limit := e.Risk.Limit
	if e.Code == exgate.CodeTradingHalted {
		limit = "halted"
	}
	s.cfg.RiskMetrics.RiskRefused(limit)
}

// handleAccountRisk answers the calling key's limits, usage and halt
// (docs/contract.md 2.8), as `exgate risk show` prints them.
func (s *Server) handleAccountRisk(w http.ResponseWriter, r *http.Request, c *call) error {
	if _, err := newParams(c.params); err != nil {
		return err
	}
	if s.cfg.Risk == nil {
		return exgate.Errorf(exgate.CodeNotImplemented, "the risk controls are not enabled on this gateway")
	}
	a, err := s.cfg.Risk.Account(r.Context(), c.apiKey)
	if err != nil {
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "the risk state cannot be read from the gateway's store", Err: err}
	}
	return writeJSON(w, a)
}
