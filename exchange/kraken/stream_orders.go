package kraken

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// wsExecution is one data item of the executions channel
// (docs.kraken.com "Executions", v2). Only the snapshot and the first
// events of an order carry every field; later events carry what changed,
// so the adapter merges them per order_id.
type wsExecution struct {
	ExecType    string       `json:"exec_type"`
	OrderID     string       `json:"order_id"`
	ClOrdID     *string      `json:"cl_ord_id"`
	Symbol      string       `json:"symbol"`
	Side        string       `json:"side"`
	OrderType   string       `json:"order_type"`
	OrderQty    rest.Decimal `json:"order_qty"`
	LimitPrice  rest.Decimal `json:"limit_price"`
	OrderStatus string       `json:"order_status"`
	CumQty      rest.Decimal `json:"cum_qty"`
	CumCost     rest.Decimal `json:"cum_cost"`
	AvgPrice    rest.Decimal `json:"avg_price"`
	PostOnly    *bool        `json:"post_only"`
	Timestamp   string       `json:"timestamp"`
	ExecID      string       `json:"exec_id"`
	Fees        []struct {
		Asset string       `json:"asset"`
		Qty   rest.Decimal `json:"qty"`
	} `json:"fees"`
	Reason *string `json:"reason"`
}

// parseExecutions parses the data of an executions message.
func parseExecutions(raw json.RawMessage) ([]wsExecution, error) {
	var out []wsExecution
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("kraken ws: unparseable executions data: %w", err)
	}
	for _, x := range out {
		if x.OrderID == "" {
			return nil, errors.New("kraken ws: an execution without order_id")
		}
		if x.Timestamp != "" {
			if _, err := wsTime(x.Timestamp); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// wsOrderStatuses maps the v2 order_status to the REST status of the same
// state, so that both go through toOrder (orderStatuses). A trade may say
// partially_filled even when it fills the order; the filled event that
// follows says so (docs.kraken.com "Executions").
var wsOrderStatuses = map[string]string{
	"pending_new":      "pending",
	"new":              "open",
	"partially_filled": "open",
	"filled":           "closed",
	"canceled":         "canceled",
	"expired":          "expired",
}

// wsOrder is an order as the stream has described it so far: the REST
// shape, filled in by events.
type wsOrder struct {
	ko      krakenOrder
	fees    decimal.Decimal
	feeExec map[string]bool
}

// complete reports whether toOrder can normalize the order.
func (o *wsOrder) complete() bool {
	return o.ko.Descr.Pair != "" && o.ko.Descr.Type != "" && o.ko.Descr.OrderType != "" && o.ko.Vol.Set && o.ko.OpenTm.Set
}

// merge applies one event.
func (o *wsOrder) merge(m *markets, x wsExecution) {
	setDec := func(dst *rest.Decimal, v rest.Decimal) {
		if v.Set {
			*dst = v
		}
	}
	if mk, ok := m.bySymbolV2(x.Symbol); ok {
		o.ko.Descr.Pair = mk.altname
	}
	if x.Side != "" {
		o.ko.Descr.Type = x.Side
	}
	if x.OrderType != "" {
		o.ko.Descr.OrderType = x.OrderType
	}
	setDec(&o.ko.Descr.Price, x.LimitPrice)
	setDec(&o.ko.Vol, x.OrderQty)
	setDec(&o.ko.VolExec, x.CumQty)
	setDec(&o.ko.Cost, x.CumCost)
	setDec(&o.ko.Price, x.AvgPrice)
	if x.ClOrdID != nil && *x.ClOrdID != "" {
		o.ko.ClOrdID = x.ClOrdID
	}
	if x.PostOnly != nil && *x.PostOnly {
		o.ko.Oflags = "post"
	}
	if x.Reason != nil {
		o.ko.Reason = x.Reason
	}
	if st, ok := wsOrderStatuses[x.OrderStatus]; ok {
		o.ko.Status = st
	}
	if t, err := wsTime(x.Timestamp); err == nil {
		ts := rest.Decimal{Decimal: decimal.New(t.UnixMilli(), -3), Set: true}
		if !o.ko.OpenTm.Set {
			o.ko.OpenTm = ts
		}
		if st := orderStatus(o.ko.Status, false); st.Final() {
			o.ko.CloseTm = ts
		}
	}
	// Fees come with each trade; Kraken charges spot fees in the quote
	// currency here (see toOrder), so those are summed.
	if x.ExecType == "trade" && x.ExecID != "" && !o.feeExec[x.ExecID] {
		if o.feeExec == nil {
			o.feeExec = map[string]bool{}
		}
		o.feeExec[x.ExecID] = true
		for _, f := range x.Fees {
			o.fees = o.fees.Add(f.Qty.Decimal)
		}
		o.ko.Fee = rest.Decimal{Decimal: o.fees, Set: true}
	}
}

// orderEmitter emits orders never going back for one order: a final
// state is not followed by an open one, the executed quantity never
// shrinks (REST catch-up and buffered stream events may overlap).
type orderEmitter struct {
	emit    func(exgate.Order)
	emitted map[string]exgate.Order // by ExchangeOrderID
}

func executed(o exgate.Order) decimal.Decimal {
	if o.ExecutedQuantity == nil {
		return decimal.Zero
	}
	return o.ExecutedQuantity.Decimal
}

func (oe *orderEmitter) send(o exgate.Order) {
	if prev, ok := oe.emitted[o.ExchangeOrderID]; ok {
		if prev.Status.Final() && !o.Status.Final() || executed(o).LessThan(executed(prev)) {
			return
		}
	}
	oe.emitted[o.ExchangeOrderID] = o
	oe.emit(o)
	if len(oe.emitted) > maxRemembered {
		for id, p := range oe.emitted {
			if p.Status.Final() {
				delete(oe.emitted, id)
			}
		}
	}
}

// maxRemembered bounds the orders an orders stream remembers; beyond it
// the final ones are forgotten (a stale REST answer about one could then
// be emitted again, in its final state).
const maxRemembered = 10_000

// changed reports whether o differs from what was emitted for it.
func (oe *orderEmitter) changed(o exgate.Order) bool {
	prev, ok := oe.emitted[o.ExchangeOrderID]
	return !ok || prev.Status != o.Status || !executed(prev).Equal(executed(o))
}

// catchUpMargin widens the window of orders taken as changed while the
// stream was down (clock differences between Kraken and here).
const catchUpMargin = time.Minute

// WatchOrders streams the key's orders from Kraken's v2 executions
// channel (wss://ws-auth.kraken.com/v2, with a token from
// GetWebSocketsToken, snap_orders=true). Each session subscribes first,
// then reads the open orders from REST (OpenOrders) and, after a
// reconnect, the recent orders of every pair it saw (RecentOrders) that
// changed while it was down, and only then goes live, so no change is
// lost. A refused key or token is EXCHANGE_AUTH_FAILED.
func (e *Exchange) WatchOrders(ctx context.Context, cred exgate.Credential, emit func(exgate.Order)) error {
	oe := &orderEmitter{emit: emit, emitted: map[string]exgate.Order{}}
	orders := map[string]*wsOrder{}
	symbols := map[exgate.Symbol]bool{}
	var lastLive time.Time
	return e.run(ctx, "executions", func(ctx context.Context, s *wsstream.Session) error {
		m, err := e.loadMarkets(ctx)
		if err != nil {
			return err
		}
		var tok struct {
			Token string `json:"token"`
		}
		if err := e.c.private(ctx, cred, "GetWebSocketsToken", nil, kindRead, "", &tok); err != nil {
			return err
		}
		c, err := e.dial(ctx, e.ws.authURL)
		if err != nil {
			return err
		}
		defer c.close()
		sub := subscribeRequest{Method: "subscribe", Params: subscribeParams{Channel: "executions", Token: tok.Token, SnapOrders: ptr(true), SnapTrades: ptr(false)}}
		if err := c.send(ctx, sub); err != nil {
			return err
		}
		handle := func(msg wsMessage, live bool) error {
			items, err := parseExecutions(msg.Data)
			if err != nil {
				return err
			}
			for _, x := range items {
				o := orders[x.OrderID]
				if o == nil {
					o = &wsOrder{}
					orders[x.OrderID] = o
				}
				o.merge(m, x)
				if !live {
					continue
				}
				if !o.complete() {
					// An event of an order the stream has not described
					// (placed while it was being set up): read it whole.
					raw, err := e.rawOrder(ctx, cred, x.OrderID)
					if err != nil {
						return err
					}
					o.ko = raw
				}
				order, err := m.toOrder(x.OrderID, o.ko, exgate.Symbol{})
				if err != nil {
					return &exgate.Error{Code: exgate.CodeExchangeError, Detail: "unparseable Kraken execution of " + x.OrderID, Err: err}
				}
				symbols[exgate.Symbol{Base: order.Asset1, Quote: order.Asset2}] = true
				oe.send(order)
				if order.Status.Final() {
					delete(orders, x.OrderID)
				}
			}
			return nil
		}
		// Once Kraken acknowledges the subscription, every later change
		// comes on the stream, so the REST reads below miss nothing. The
		// snapshot (the open orders), usually next, completes the picture
		// of the orders it names; the REST reads are what is emitted.
		for {
			msg, err := c.next(ctx)
			if err != nil {
				return err
			}
			if msg.Method == "subscribe" {
				break
			}
			if msg.Channel != "executions" {
				continue
			}
			if err := handle(msg, msg.Type != "snapshot"); err != nil {
				return err
			}
			if msg.Type == "snapshot" {
				break
			}
		}
		open, err := e.OpenOrders(ctx, cred, exgate.OrderFilter{})
		if err != nil {
			return err
		}
		for i := len(open) - 1; i >= 0; i-- { // oldest first
			symbols[exgate.Symbol{Base: open[i].Asset1, Quote: open[i].Asset2}] = true
			oe.send(open[i])
		}
		if s.Reconnect {
			since := lastLive.Add(-catchUpMargin).UnixMilli()
			if lastLive.IsZero() {
				since = e.now().UnixMilli() // never live: nothing closed was missed
			}
			for sym := range symbols {
				recent, err := e.RecentOrders(ctx, cred, exgate.OrderFilter{Symbol: sym})
				if err != nil {
					return err
				}
				for i := len(recent) - 1; i >= 0; i-- {
					o := recent[i]
					_, seen := oe.emitted[o.ExchangeOrderID]
					if oe.changed(o) && (seen || o.CloseAt >= since || !o.Status.Final()) {
						oe.send(o)
					}
				}
			}
		}
		s.Live()
		for {
			lastLive = e.now()
			msg, err := c.next(ctx)
			if err != nil {
				return err
			}
			if msg.Channel == "executions" {
				if err := handle(msg, true); err != nil {
					return err
				}
			}
		}
	})
}

// rawOrder reads one order by txid in Kraken's REST shape.
func (e *Exchange) rawOrder(ctx context.Context, cred exgate.Credential, txid string) (krakenOrder, error) {
	var res map[string]krakenOrder
	if err := e.c.private(ctx, cred, "QueryOrders", url.Values{"txid": {txid}}, kindRead, "", &res); err != nil {
		return krakenOrder{}, err
	}
	o, ok := res[txid]
	if !ok {
		return krakenOrder{}, &exgate.Error{Code: exgate.CodeNotFound, Detail: "Kraken has no order " + txid, Err: exgate.ErrNotFound}
	}
	return o, nil
}
