package httpapi

import (
	"context"
	"net/http"

	"github.com/exgate/exgate"
)

// lifecycleLedger is the journal's side of the order lifecycle (docs/contract.md
// 2.4): limit orders and cancels recorded like market orders, and the ids
// the client knows put on orders and fills read from the exchange.
type lifecycleLedger interface {
	PlaceLimitOrder(ctx context.Context, cred exgate.Credential, req exgate.LimitOrderRequest, clientRef string) (exgate.Order, error)
	CancelOrder(ctx context.Context, cred exgate.Credential, id, clientRef string) (exgate.Order, error)
	CancelAll(ctx context.Context, cred exgate.Credential, sym exgate.Symbol) ([]exgate.Order, error)
	LabelOrders(ctx context.Context, apiKey string, orders []exgate.Order) []exgate.Order
	LabelFills(ctx context.Context, apiKey string, fills []exgate.Fill) []exgate.Fill
	LabelWithdrawals(ctx context.Context, apiKey string, wds []exgate.Withdrawal) []exgate.Withdrawal
}

// lifecycle returns the journal's lifecycle side and the exchange's order
// manager, or NOT_IMPLEMENTED when either is missing.
func (s *Server) lifecycle(c *call) (lifecycleLedger, exgate.OrderManager, error) {
	l := s.life
	om, ok := exgate.Ability[exgate.OrderManager](c.ex)
	if l == nil || !ok {
		return nil, nil, exgate.Errorf(exgate.CodeNotImplemented,
			"this route is not available on %s through this gateway yet", c.cred.Exchange)
	}
	return l, om, nil
}

// boolean reads a JSON boolean parameter (false when absent).
func (ps params) boolean(name string) (bool, error) {
	p, ok := ps.byName[name]
	if !ok {
		return false, nil
	}
	if p.isString || (p.value != "true" && p.value != "false") {
		return false, exgate.ParamError(name, "%s must be true or false", name)
	}
	return p.value == "true", nil
}

// checkSymbol refuses a pair the exchange does not list
// (exgate.ListedSymbol) and returns its market.
func checkSymbol(ctx context.Context, om exgate.SymbolLister, cred exgate.Credential, sym exgate.Symbol) (exgate.SymbolInfo, error) {
	return exgate.ListedSymbol(ctx, om, cred, sym)
}

func (s *Server) handleLimitOrder(w http.ResponseWriter, r *http.Request, c *call) error {
	ps, err := newParams(c.params, "asset1", "asset2", "side", "quantity", "price", "timeInForce", "postOnly", "clientOrderId", "test")
	if err != nil {
		return err
	}
	req, ref, test, err := limitOrderRequest(ps, r)
	if err != nil {
		return err
	}
	l, om, err := s.lifecycle(c)
	if err != nil {
		return err
	}
	info, err := checkSymbol(r.Context(), om, c.cred, req.Symbol)
	if err != nil {
		return err
	}
	if tick, perr := exgate.ParseDecimal(info.PriceStep); perr == nil {
		if err := exgate.CheckPrice(req.Price, tick); err != nil {
			return err
		}
	}
	// The risk checks come before the journal and the exchange, and
	// answer a test order the refusal a real one would get.
	ctx, err := s.checkOrderRisk(r.Context(), c, riskOrder{limit: &req}, test)
	if err != nil {
		return err
	}
	if test {
		o, err := om.TestOrder(ctx, c.cred, exgate.TestOrderRequest{Limit: &req})
		if err != nil {
			return err
		}
		o.ClientOrderID = ref
		return writeJSON(w, o)
	}
	order, err := l.PlaceLimitOrder(ctx, c.cred, req, ref)
	if err != nil {
		return withPending(err, order)
	}
	return writeJSON(w, order)
}

func limitOrderRequest(ps params, r *http.Request) (req exgate.LimitOrderRequest, ref string, test bool, err error) {
	if req.Symbol, err = ps.symbol(); err != nil {
		return
	}
	var text string
	if text, err = ps.str("side", true); err != nil {
		return
	}
	if req.Side, err = exgate.ParseSide(text); err != nil {
		err = exgate.ParamError("side", "%s", err)
		return
	}
	if req.Quantity, _, err = ps.positiveDecimal("quantity", true); err != nil {
		return
	}
	if req.Price, _, err = ps.positiveDecimal("price", true); err != nil {
		return
	}
	req.TimeInForce = exgate.GTC
	if text, err = ps.str("timeInForce", false); err != nil {
		return
	}
	if text != "" {
		if req.TimeInForce, err = exgate.ParseTimeInForce(text); err != nil {
			err = exgate.ParamError("timeInForce", "%s", err)
			return
		}
	}
	if req.PostOnly, err = ps.boolean("postOnly"); err != nil {
		return
	}
	if test, err = ps.boolean("test"); err != nil {
		return
	}
	if err = req.Validate(); err != nil {
		return
	}
	ref, err = ps.clientRef("clientOrderId", r)
	return
}

// marketOrderExtras checks the risk limits and handles what docs/contract.md 2.4 adds to POST
// /v1/order/market: test: true, and a pair given the other way round,
// which is placed as the opposite side on the listed pair. It reports
// whether it answered the request (a test order); an error is not yet
// written.
func (s *Server) marketOrderExtras(w http.ResponseWriter, r *http.Request, c *call, ps params, req *exgate.OrderRequest) (bool, context.Context, error) {
	ctx := r.Context()
	test, err := ps.boolean("test")
	if err != nil {
		return false, ctx, err
	}
	om, ok := exgate.Ability[exgate.OrderManager](c.ex)
	if !ok {
		if test {
			return false, ctx, exgate.Errorf(exgate.CodeNotImplemented, "test orders are not available on %s through this gateway yet", c.cred.Exchange)
		}
		ctx, err = s.checkOrderRisk(ctx, c, riskOrder{market: req}, false)
		return false, ctx, err
	}
	if _, inverse, _, err := exgate.LookupSymbol(ctx, om, c.cred, req.Symbol); err == nil && inverse {
		*req = exgate.InvertOrderRequest(*req)
	}
	if ctx, err = s.checkOrderRisk(ctx, c, riskOrder{market: req}, test); err != nil || !test {
		return false, ctx, err
	}
	o, err := om.TestOrder(ctx, c.cred, exgate.TestOrderRequest{Market: req})
	if err != nil {
		return false, ctx, err
	}
	if req.Inverted {
		o = o.Inverted()
	}
	o.ClientOrderID, _ = ps.str("clientOrderId", false)
	return true, ctx, writeJSON(w, o)
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request, c *call) error {
	id, ref, err := lookupRef(c.params, "clientOrderId")
	if err != nil {
		return err
	}
	l, _, err := s.lifecycle(c)
	if err != nil {
		return err
	}
	order, err := l.CancelOrder(r.Context(), c.cred, id, ref)
	if err != nil {
		return withPending(err, order)
	}
	return writeJSON(w, order)
}

func (s *Server) handleCancelAll(w http.ResponseWriter, r *http.Request, c *call) error {
	ps, err := newParams(c.params, "asset1", "asset2")
	if err != nil {
		return err
	}
	sym, err := ps.symbol()
	if err != nil {
		return err
	}
	l, om, err := s.lifecycle(c)
	if err != nil {
		return err
	}
	if _, err := checkSymbol(r.Context(), om, c.cred, sym); err != nil {
		return err
	}
	orders, err := l.CancelAll(r.Context(), c.cred, sym)
	if err != nil {
		return err
	}
	return writeJSON(w, orders)
}

// optionalSymbol reads asset1 and asset2 when either is given.
func optionalSymbol(ps params) (exgate.Symbol, error) {
	_, ok1 := ps.byName["asset1"]
	_, ok2 := ps.byName["asset2"]
	if !ok1 && !ok2 {
		return exgate.Symbol{}, nil
	}
	return ps.symbol()
}

func (s *Server) handleOpenOrders(w http.ResponseWriter, r *http.Request, c *call) error {
	ps, err := newParams(c.params, "asset1", "asset2")
	if err != nil {
		return err
	}
	sym, err := optionalSymbol(ps)
	if err != nil {
		return err
	}
	l, om, err := s.lifecycle(c)
	if err != nil {
		return err
	}
	if (sym != exgate.Symbol{}) {
		if _, err := checkSymbol(r.Context(), om, c.cred, sym); err != nil {
			return err
		}
	}
	orders, err := om.OpenOrders(r.Context(), c.cred, exgate.OrderFilter{Symbol: sym})
	if err != nil {
		return err
	}
	return writeJSON(w, nonNil(l.LabelOrders(r.Context(), c.apiKey, orders)))
}

// historyFilter reads asset1, asset2 (required) and limit.
func (s *Server) historyFilter(c *call, r *http.Request) (lifecycleLedger, exgate.OrderManager, exgate.OrderFilter, error) {
	var f exgate.OrderFilter
	ps, err := newParams(c.params, "asset1", "asset2", "limit")
	if err != nil {
		return nil, nil, f, err
	}
	if f.Symbol, err = ps.symbol(); err != nil {
		return nil, nil, f, err
	}
	if f.Limit, err = ps.limit("limit", exgate.DefaultRecentLimit, exgate.MaxRecentLimit); err != nil {
		return nil, nil, f, err
	}
	l, om, err := s.lifecycle(c)
	if err != nil {
		return nil, nil, f, err
	}
	if _, err := checkSymbol(r.Context(), om, c.cred, f.Symbol); err != nil {
		return nil, nil, f, err
	}
	return l, om, f, nil
}

func (s *Server) handleRecentOrders(w http.ResponseWriter, r *http.Request, c *call) error {
	l, om, f, err := s.historyFilter(c, r)
	if err != nil {
		return err
	}
	orders, err := om.RecentOrders(r.Context(), c.cred, f)
	if err != nil {
		return err
	}
	return writeJSON(w, nonNil(l.LabelOrders(r.Context(), c.apiKey, orders)))
}

func (s *Server) handleFills(w http.ResponseWriter, r *http.Request, c *call) error {
	l, om, f, err := s.historyFilter(c, r)
	if err != nil {
		return err
	}
	fills, err := om.Fills(r.Context(), c.cred, f)
	if err != nil {
		return err
	}
	return writeJSON(w, nonNil(l.LabelFills(r.Context(), c.apiKey, fills)))
}

func (s *Server) handleRecentWithdrawals(w http.ResponseWriter, r *http.Request, c *call) error {
	asset, status, err := transferFilter(c.params)
	if err != nil {
		return err
	}
	f := exgate.WithdrawalFilter{Asset: asset, Status: status}
	l, om, err := s.lifecycle(c)
	if err != nil {
		return err
	}
	wds, err := om.RecentWithdrawals(r.Context(), c.cred, f)
	if err != nil {
		return err
	}
	return writeJSON(w, nonNil(l.LabelWithdrawals(r.Context(), c.apiKey, wds)))
}

func (s *Server) handleSymbols(w http.ResponseWriter, r *http.Request, c *call) error {
	ps, err := newParams(c.params, "asset1", "asset2")
	if err != nil {
		return err
	}
	sym, err := optionalSymbol(ps)
	if err != nil {
		return err
	}
	_, om, err := s.lifecycle(c)
	if err != nil {
		return err
	}
	infos, err := om.Symbols(r.Context(), c.cred, exgate.SymbolFilter{Symbol: sym})
	if err != nil {
		return err
	}
	return writeJSON(w, nonNil(infos))
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
