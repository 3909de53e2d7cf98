package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/exgate/exgate"
)

// orderIntent is the request the journal records for an order: a market
// order (the embedded OrderRequest, as intents recorded before limit
// orders existed read back) or, when Limit is set, a limit order.
type orderIntent struct {
	exgate.OrderRequest
	Limit *exgate.LimitOrderRequest `json:",omitempty"`
}

func (r *orderIntent) setID(id string) {
	r.ClientOrderID = id
	if r.Limit != nil {
		r.Limit.ClientOrderID = id
	}
}

func (r orderIntent) symbol() exgate.Symbol {
	if r.Limit != nil {
		return r.Limit.Symbol
	}
	return r.Symbol
}

// notImplemented is the refusal of a lifecycle call on an exchange whose
// adapter does not implement exgate.OrderManager yet.
func notImplemented(ex exgate.Exchange, what string) error {
	return exgate.Errorf(exgate.CodeNotImplemented, "%s are not available on %s through this gateway yet", what, ex.Name())
}

func submitOrder(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r orderIntent) (exgate.Order, error) {
	if r.Limit != nil {
		om, ok := exgate.Ability[exgate.OrderManager](ex)
		if !ok {
			return exgate.Order{}, notImplemented(ex, "limit orders")
		}
		return om.PlaceLimitOrder(ctx, cred, *r.Limit)
	}
	o, err := ex.PlaceMarketOrder(ctx, cred, r.OrderRequest)
	if err == nil && r.Inverted {
		o = o.Inverted()
	}
	return o, err
}

func queryOrder(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r orderIntent, id string) (exgate.Order, error) {
	o, err := ex.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: r.symbol(), ClientOrderID: id})
	if err == nil && r.Inverted {
		o = o.Inverted()
	}
	return o, err
}

// pendingOrder is the order answered while its outcome is unknown, in the
// client's orientation.
func pendingOrder(r orderIntent, id string, at time.Time, exchange string) exgate.Order {
	if l := r.Limit; l != nil {
		return exgate.Order{
			ID: id, Asset1: l.Symbol.Base, Asset2: l.Symbol.Quote, Status: exgate.OrderPending,
			Type: exgate.OrderTypeLimit, Side: l.Side, Quantity: exgate.NewNumber(l.Quantity),
			QuantityIn: l.Symbol.Base, OpenAt: at.UnixMilli(), CloseAt: at.UnixMilli(), Exchange: exchange,
			Price: exgate.NumberPtr(l.Price), TimeInForce: l.TimeInForce, PostOnly: l.PostOnly,
		}
	}
	o := exgate.Order{
		ID: id, Asset1: r.Symbol.Base, Asset2: r.Symbol.Quote, Status: exgate.OrderPending,
		Type: exgate.OrderTypeMarket, Side: r.Side, Quantity: exgate.NewNumber(r.Quantity),
		QuantityIn: r.QuantityIn.Asset(r.Symbol), OpenAt: at.UnixMilli(), CloseAt: at.UnixMilli(),
		Exchange: exchange,
	}
	if r.Inverted {
		o = o.Inverted()
	}
	return o
}

// refusedOrder is an order the exchange refused, or found never placed,
// as GET /v1/order answers it (docs/contract.md 2.4).
func refusedOrder(r orderIntent, id string, at time.Time, exchange string, reason exgate.Reason) exgate.Order {
	o := pendingOrder(r, id, at, exchange)
	o.Status, o.Reason = exgate.OrderRejected, &reason
	return o
}

// PlaceLimitOrder places a limit order once per client reference, like
// PlaceOrder.
func (s *Service) PlaceLimitOrder(ctx context.Context, cred exgate.Credential, req exgate.LimitOrderRequest, clientRef string) (exgate.Order, error) {
	return submit(ctx, s, orderKind, cred, orderIntent{Limit: &req}, clientRef)
}

// cancelIntent is the request the journal records for a cancel.
type cancelIntent struct {
	exgate.CancelRequest
	// OrderID is the gateway's id of the order, empty for an order
	// placed outside the gateway.
	OrderID  string `json:",omitempty"`
	Inverted bool   `json:",omitempty"`
}

// cancelKind journals cancels. The exchange's cancel names the order by
// its client order id (the gateway's id), so it can cancel no other
// order; an unknown outcome is reconciled by reading the order, and a
// cancel is sent again only when the order is found still open.
var cancelKind = kind[cancelIntent, exgate.Order]{
	name:     exgate.IntentCancel,
	prefix:   'c',
	rejected: exgate.CodeOrderRejected,
	setID:    func(*cancelIntent, string) {},
	submit: func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r cancelIntent) (exgate.Order, error) {
		om, ok := exgate.Ability[exgate.OrderManager](ex)
		if !ok {
			return exgate.Order{}, notImplemented(ex, "cancels")
		}
		o, err := om.CancelOrder(ctx, cred, r.CancelRequest)
		if errors.Is(err, exgate.ErrNotFound) {
			return exgate.Order{}, &exgate.Error{Code: exgate.CodeNotFound, Detail: "the exchange has no such order to cancel", Err: err}
		}
		if err == nil && r.Inverted {
			o = o.Inverted()
		}
		return o, err
	},
	query: func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r cancelIntent, _ string) (exgate.Order, error) {
		o, err := ex.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: r.Symbol, ClientOrderID: r.ClientOrderID, ExchangeOrderID: r.ExchangeOrderID})
		if err != nil {
			return o, err
		}
		if !o.Status.Final() {
			// Read, and still open: the cancel did not reach the
			// exchange. Sent again by the same client order id.
			om, ok := exgate.Ability[exgate.OrderManager](ex)
			if !ok {
				return o, notImplemented(ex, "cancels")
			}
			if o, err = om.CancelOrder(ctx, cred, r.CancelRequest); err != nil {
				return o, err
			}
		}
		if r.Inverted {
			o = o.Inverted()
		}
		return o, nil
	},
	pending: func(r cancelIntent, id string, at time.Time, exchange string) exgate.Order {
		return exgate.Order{ID: r.OrderID, Asset1: r.Symbol.Base, Asset2: r.Symbol.Quote, Status: exgate.OrderPending,
			OpenAt: at.UnixMilli(), CloseAt: at.UnixMilli(), Exchange: exchange}
	},
	label: func(o exgate.Order, _, _ string) exgate.Order { return o },
	final: func(o exgate.Order) bool { return o.Status.Final() },
}

// CancelOrder cancels an order of the client, named by the gateway's id or
// the client's own id, through the journal. An order that is final already
// is answered as it is (FILLED, REJECTED...); an order of another client
// or exchange key is NOT_FOUND.
func (s *Service) CancelOrder(ctx context.Context, cred exgate.Credential, id, clientRef string) (exgate.Order, error) {
	var it exgate.Intent
	var err error
	if id != "" {
		it, err = s.store.Intent(ctx, id)
	} else {
		it, err = s.store.IntentByClientRef(ctx, cred.ClientAPIKey, exgate.IntentOrder, clientRef)
	}
	if err == nil && (it.ClientAPIKey != cred.ClientAPIKey || it.Kind != exgate.IntentOrder || it.CredentialID != cred.ID) {
		err = exgate.ErrNotFound
	}
	if errors.Is(err, exgate.ErrNotFound) {
		return exgate.Order{}, exgate.Errorf(exgate.CodeNotFound, "no order with that id for this API key and exchange key")
	}
	if err != nil {
		return exgate.Order{}, storeError(err)
	}
	// The order's own answer goes to disk before the cancel's outcome can
	// be recorded over it.
	s.saved(ctx, it.ID)
	current, err := lookup(ctx, s, orderKind, cred.ClientAPIKey, cred.ID, it.ID, "")
	if err != nil {
		return exgate.Order{}, err
	}
	if current.Status.Final() {
		return current, nil
	}
	var req orderIntent
	if err := json.Unmarshal(it.Request, &req); err != nil {
		return exgate.Order{}, fmt.Errorf("journal: decode request %s: %w", it.ID, err)
	}
	o, err := submit(ctx, s, cancelKind, cred, cancelIntent{
		CancelRequest: exgate.CancelRequest{Symbol: req.symbol(), ClientOrderID: it.ID, ExchangeOrderID: current.ExchangeOrderID},
		OrderID:       it.ID,
		Inverted:      req.Inverted,
	}, "")
	if e, ok := errors.AsType[*exgate.Error](err); ok && e.Code == exgate.CodeExchangeTimeout {
		return current, exgate.Errorf(exgate.CodeExchangeTimeout,
			"the exchange did not confirm the cancel in time; it is being reconciled by reading the order; read it with GET /v1/order?id=%s", it.ID)
	}
	if err != nil {
		return exgate.Order{}, err
	}
	o = orderKind.label(o, it.ID, it.ClientRef)
	// Record the order's new state at once; the reconciler would find it
	// too.
	if body, jerr := json.Marshal(o); jerr == nil {
		state := exgate.IntentAccepted
		if o.Status.Final() {
			state = exgate.IntentFinal
		}
		saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := s.store.UpdateIntent(saveCtx, it.ID, exgate.IntentOutcome{State: state, Answer: exgate.AnswerRecord, Response: body}); err != nil {
			s.log.WarnContext(ctx, "journal: canceled order not recorded; the reconciler will settle it", "id", it.ID, "err", err)
		}
	}
	return o, nil
}

// CancelAll cancels every open order of a pair on the exchange, the
// gateway's through the journal (CancelOrder) and any placed outside it
// by the exchange's ids, and returns the orders as they are after.
func (s *Service) CancelAll(ctx context.Context, cred exgate.Credential, sym exgate.Symbol) ([]exgate.Order, error) {
	ex, ok := s.exchanges[cred.Exchange]
	if !ok {
		return nil, exgate.Errorf(exgate.CodeExchangeUnavailable, "exchange %q is not enabled on this gateway", cred.Exchange)
	}
	om, ok := exgate.Ability[exgate.OrderManager](ex)
	if !ok {
		return nil, notImplemented(ex, "cancels")
	}
	open, err := om.OpenOrders(ctx, cred, exgate.OrderFilter{Symbol: sym})
	if err != nil {
		return nil, err
	}
	out := []exgate.Order{}
	for _, o := range open {
		var done exgate.Order
		if it, err := s.store.Intent(ctx, o.ClientOrderID); err == nil && it.Kind == exgate.IntentOrder && it.ClientAPIKey == cred.ClientAPIKey {
			done, err = s.CancelOrder(ctx, cred, it.ID, "")
			if err != nil {
				return out, err
			}
		} else {
			done, err = submit(ctx, s, cancelKind, cred, cancelIntent{CancelRequest: exgate.CancelRequest{
				Symbol: sym, ClientOrderID: o.ClientOrderID, ExchangeOrderID: o.ExchangeOrderID}}, "")
			if err != nil {
				return out, err
			}
			done = s.labelOrder(ctx, cred.ClientAPIKey, done)
		}
		out = append(out, done)
	}
	return out, nil
}

// LabelOrders gives orders read from the exchange the ids the client
// knows: the gateway's id and the client's own clientOrderId for orders
// the gateway placed; the exchange's id and no client id for the others.
// Orders stay in the orientation of the listed pair.
func (s *Service) LabelOrders(ctx context.Context, apiKey string, orders []exgate.Order) []exgate.Order {
	for i := range orders {
		orders[i] = s.labelOrder(ctx, apiKey, orders[i])
	}
	return orders
}

func (s *Service) labelOrder(ctx context.Context, apiKey string, o exgate.Order) exgate.Order {
	if it, ok := s.placed(ctx, apiKey, o.ClientOrderID); ok {
		o.ID, o.ClientOrderID = it.ID, it.ClientRef
		return o
	}
	if o.ExchangeOrderID != "" {
		o.ID = o.ExchangeOrderID
	}
	o.ClientOrderID = ""
	return o
}

// LabelFills gives fills the order ids the client knows, as LabelOrders.
func (s *Service) LabelFills(ctx context.Context, apiKey string, fills []exgate.Fill) []exgate.Fill {
	for i, f := range fills {
		if it, ok := s.placed(ctx, apiKey, f.ClientOrderID); ok {
			fills[i].OrderID, fills[i].ClientOrderID = it.ID, it.ClientRef
		} else {
			fills[i].ClientOrderID = ""
		}
	}
	return fills
}

// LabelWithdrawals gives withdrawals read from the exchange the ids the
// client knows, as LabelOrders does for orders: the gateway's id and the
// client's own clientWithdrawalId for withdrawals the gateway sent (the
// exchange holds the gateway's id as its client withdrawal id); the
// exchange's id and no client id for the others.
func (s *Service) LabelWithdrawals(ctx context.Context, apiKey string, wds []exgate.Withdrawal) []exgate.Withdrawal {
	for i, w := range wds {
		if it, ok := s.sent(ctx, apiKey, exgate.IntentWithdrawal, w.ClientWithdrawalID); ok {
			wds[i].ID, wds[i].ClientWithdrawalID = it.ID, it.ClientRef
			continue
		}
		if w.ExchangeID != "" {
			wds[i].ID = w.ExchangeID
		}
		wds[i].ClientWithdrawalID = ""
	}
	return wds
}

// placed finds the order intent of the client whose gateway id is the
// exchange's client order id cid.
func (s *Service) placed(ctx context.Context, apiKey, cid string) (exgate.Intent, bool) {
	return s.sent(ctx, apiKey, exgate.IntentOrder, cid)
}

// sent finds the intent of the kind of the client whose gateway id is the
// exchange's client id cid.
func (s *Service) sent(ctx context.Context, apiKey string, kind exgate.IntentKind, cid string) (exgate.Intent, bool) {
	if cid == "" {
		return exgate.Intent{}, false
	}
	it, err := s.store.Intent(ctx, cid)
	if err != nil || it.ClientAPIKey != apiKey || it.Kind != kind {
		return exgate.Intent{}, false
	}
	return it, true
}
