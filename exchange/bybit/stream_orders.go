package bybit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// The order stream: the private topic order.spot after {"op":"auth"}.
// Source: https://bybit-exchange.github.io/docs/v5/websocket/private/order.
// Each push carries order objects as GET /v5/order/realtime lists them
// (plus category and feeCurrency), which go through the same conversion
// (orderFromBybit). The open orders are read from REST once the
// subscription is live; after a reconnect the recent orders of every pair
// the stream has seen are read too, so a change made while the stream was
// down is emitted.

// orderTopic is the private spot order topic.
const orderTopic = "order.spot"

// catchUpSlack widens the outage window when recent orders are compared
// with it.
const catchUpSlack = time.Minute

// parseOrderPush reads an order push's data: spot orders only.
func parseOrderPush(data json.RawMessage) ([]orderJSON, error) {
	var rows []orderJSON
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("order message: %w", err)
	}
	out := rows[:0]
	for _, o := range rows {
		if o.Category != "" && o.Category != "spot" {
			continue
		}
		if o.Symbol == "" {
			return nil, fmt.Errorf("order message %s without a symbol", o.OrderID)
		}
		if err := checkOrder(o); err != nil {
			return nil, fmt.Errorf("order message: %w", err)
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
	marks   map[string]orderMark
	symbols map[exgate.Symbol]bool
}

// maxMarks bounds the orders remembered; past it the finished ones are
// forgotten.
const maxMarks = 10000

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

// WatchOrders emits every change of cred's spot orders (see the comment
// at the top of this file). A refused key ends it with
// EXCHANGE_AUTH_FAILED.
func (e *Exchange) WatchOrders(ctx context.Context, cred exgate.Credential, emit func(exgate.Order)) error {
	t := &orderTracker{marks: map[string]orderMark{}, symbols: map[exgate.Symbol]bool{}}
	var heard time.Time
	send := func(o exgate.Order) {
		if t.admit(o) {
			emit(o)
		}
	}
	return wsstream.Run(ctx, e.runConfig("orders "+cred.Name), func(ctx context.Context, s *wsstream.Session) error {
		c, err := e.dial(ctx, e.stream.privateURL)
		if err != nil {
			return err
		}
		defer c.close()
		var pending []wsMessage
		if err := c.authenticate(ctx, cred); err != nil {
			return err
		}
		if err := c.request(ctx, "subscribe", []any{orderTopic}, &pending); err != nil {
			return err
		}
		if err := e.catchUp(ctx, cred, t, s.Reconnect, heard, send); err != nil {
			return err
		}
		heard = e.c.Now()
		s.Live()
		handle := func(m wsMessage) error {
			if m.Topic != orderTopic && m.Topic != "order" {
				return nil
			}
			os, err := parseOrderPush(m.Data)
			if err != nil {
				return err
			}
			heard = e.c.Now()
			for _, o := range os {
				p, err := e.pairOf(ctx, o.Symbol)
				if err != nil {
					e.log.WarnContext(ctx, "bybit order of an unknown symbol; skipped", "symbol", o.Symbol, "orderId", o.OrderID, "err", err)
					continue
				}
				send(e.orderFromBybit(p, o, ""))
			}
			return nil
		}
		for _, m := range pending {
			if err := handle(m); err != nil {
				return err
			}
		}
		for {
			m, err := c.next(ctx)
			if err != nil {
				return err
			}
			if err := handle(m); err != nil {
				return err
			}
		}
	})
}

// catchUp emits the open orders and, after a reconnect, the recent orders
// of every pair seen that changed since the stream last heard from Bybit
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
			for i := len(recent) - 1; i >= 0; i-- {
				o := recent[i]
				_, known := t.marks[o.ExchangeOrderID]
				if known || !o.Status.Final() || o.CloseAt >= since {
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
