package gateio

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// The order stream: spot.orders with payload ["!all"] (every pair),
// authenticated in the subscribe request (Gate WS docs, "Orders Channel",
// "Authentication"). Each update carries Gate's order objects with an
// `event` (put: created, update: filled in part, finish: closed or
// cancelled) and no `status`; the status is derived from event and
// finish_as and the order then goes through the same conversion as the
// REST lookups (orderFromGate, orderStatus). The open orders are read
// from REST when the subscription is live; after a reconnect the recent
// orders of every pair the stream has seen are read too, so a change
// made while the stream was down is emitted.

// ordersChannel is the private order channel.
const ordersChannel = "spot.orders"

// catchUpSlack widens the outage window when recent orders are compared
// with it (Gate's update times are in seconds).
const catchUpSlack = time.Minute

// wsOrderJSON is one order of a spot.orders update.
type wsOrderJSON struct {
	orderJSON
	Event string `json:"event"`
}

// wsOrderStatus is the REST status an order object of the stream stands
// for: open while put or updated, closed when finished as filled,
// cancelled when finished any other way.
func wsOrderStatus(event, finishAs string) (string, error) {
	switch event {
	case "put", "update":
		return "open", nil
	case "finish":
		if finishAs == "filled" {
			return "closed", nil
		}
		return "cancelled", nil
	}
	return "", fmt.Errorf("order event %q", event)
}

// parseOrderUpdate reads the result of a spot.orders update: a list of
// orders, possibly of several pairs.
func parseOrderUpdate(raw []byte) ([]orderJSON, error) {
	var rows []wsOrderJSON
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("order update: %w", err)
	}
	out := make([]orderJSON, 0, len(rows))
	for _, r := range rows {
		o := r.orderJSON
		if o.Status == "" {
			st, err := wsOrderStatus(r.Event, o.FinishAs)
			if err != nil {
				return nil, fmt.Errorf("order update %s: %w", o.ID, err)
			}
			o.Status = st
		}
		if o.CurrencyPair == "" {
			return nil, fmt.Errorf("order update %s without a currency pair", o.ID)
		}
		if err := checkOrder(&o); err != nil {
			return nil, fmt.Errorf("order update: %w", err)
		}
		out = append(out, o)
	}
	return out, nil
}

// orderMark is what the stream last emitted of an order.
type orderMark struct {
	status   exgate.OrderStatus
	executed string
	fees     string
}

// orderTracker keeps one order's emissions in order across the live
// stream and the REST catch-up: nothing after a final status, nothing
// with less executed than already emitted, nothing unchanged.
type orderTracker struct {
	marks map[string]orderMark
	// symbols are the pairs the stream has seen orders of.
	symbols map[exgate.Symbol]bool
}

// maxMarks bounds the orders remembered; past it the finished ones are
// forgotten.
const maxMarks = 10000

func newOrderTracker() *orderTracker {
	return &orderTracker{marks: map[string]orderMark{}, symbols: map[exgate.Symbol]bool{}}
}

func numText(n *exgate.Number) string {
	if n == nil {
		return ""
	}
	return n.String()
}

// admit reports whether o is to be emitted, and records it.
func (t *orderTracker) admit(o exgate.Order) bool {
	key := o.ExchangeOrderID
	if key == "" {
		key = o.ID
	}
	t.symbols[exgate.Symbol{Base: o.Asset1, Quote: o.Asset2}] = true
	m := orderMark{status: o.Status, executed: numText(o.ExecutedQuantity), fees: numText(o.Fees)}
	prev, seen := t.marks[key]
	if seen {
		if prev == m || prev.status.Final() {
			return false
		}
		if o.ExecutedQuantity != nil && prev.executed != "" {
			if was, err := exgate.ParseDecimal(prev.executed); err == nil && o.ExecutedQuantity.LessThan(was) {
				return false
			}
		}
	}
	if len(t.marks) >= maxMarks {
		for k, v := range t.marks {
			if v.status.Final() {
				delete(t.marks, k)
			}
		}
	}
	t.marks[key] = m
	return true
}

// WatchOrders emits every change of cred's orders (see the comment at the
// top of this file). A refused key ends it with EXCHANGE_AUTH_FAILED.
func (e *Exchange) WatchOrders(ctx context.Context, cred exgate.Credential, emit func(exgate.Order)) error {
	t := newOrderTracker()
	// heard is when the last session last heard from Gate: changes since
	// then are brought up to date after a reconnect.
	var heard time.Time
	send := func(o exgate.Order) {
		if t.admit(o) {
			emit(o)
		}
	}
	return wsstream.Run(ctx, e.runConfig("orders "+cred.Name), func(ctx context.Context, s *wsstream.Session) error {
		c, err := e.dial(ctx)
		if err != nil {
			return err
		}
		defer c.close()
		if err := c.subscribe(ctx, ordersChannel, []string{"!all"}, &cred); err != nil {
			return err
		}
		live := false
		var early []orderJSON // updates before the catch-up is done
		for {
			m, _, err := c.next(ctx, nil)
			if err != nil {
				return err
			}
			if done, err := c.answered(m, ordersChannel); done {
				if err != nil {
					return err
				}
				if err := e.catchUp(ctx, cred, t, s.Reconnect, heard, send); err != nil {
					return err
				}
				live = true
				heard = e.c.Now()
				s.Live()
				for _, o := range early {
					e.emitGate(ctx, o, send)
				}
				early = nil
				continue
			}
			if m.Channel != ordersChannel || m.Event != "update" {
				continue
			}
			os, err := parseOrderUpdate(m.Result)
			if err != nil {
				return err
			}
			if !live {
				early = append(early, os...)
				continue
			}
			heard = e.c.Now()
			for _, o := range os {
				e.emitGate(ctx, o, send)
			}
		}
	})
}

// emitGate converts one of Gate's orders and emits it.
func (e *Exchange) emitGate(ctx context.Context, o orderJSON, send func(exgate.Order)) {
	p, err := e.pairByID(ctx, o.CurrencyPair)
	if err != nil {
		e.log.WarnContext(ctx, "gateio order update of an unknown pair; skipped", "pair", o.CurrencyPair, "orderId", o.ID, "err", err)
		return
	}
	send(e.orderFromGate(p, o, ""))
}

// catchUp emits the open orders and, after a reconnect, the recent orders
// of every pair seen that changed since the stream last heard from Gate
// (or that the stream knows and changed).
func (e *Exchange) catchUp(ctx context.Context, cred exgate.Credential, t *orderTracker, reconnect bool, heard time.Time, send func(exgate.Order)) error {
	open, err := e.OpenOrders(ctx, cred, exgate.OrderFilter{})
	if err != nil {
		return err
	}
	for _, o := range open {
		t.symbols[exgate.Symbol{Base: o.Asset1, Quote: o.Asset2}] = true
	}
	if reconnect {
		since := heard.Add(-catchUpSlack).UnixMilli()
		for sym := range t.symbols {
			recent, err := e.RecentOrders(ctx, cred, exgate.OrderFilter{Symbol: sym, Limit: exgate.MaxRecentLimit})
			if err != nil {
				return err
			}
			// Oldest first, so that the emissions follow Gate's order.
			for i := len(recent) - 1; i >= 0; i-- {
				o := recent[i]
				_, known := t.marks[o.ExchangeOrderID]
				if known || o.Status == exgate.OrderPending || o.Status == exgate.OrderPartiallyFilled || o.CloseAt >= since {
					send(o)
				}
			}
		}
	}
	for i := len(open) - 1; i >= 0; i-- {
		send(open[i])
	}
	return nil
}
