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

// WatchOrders emits every change of cred's spot orders (see the comment
// at the top of this file). A refused key ends it with
// EXCHANGE_AUTH_FAILED.
func (e *Exchange) WatchOrders(ctx context.Context, cred exgate.Credential, emit func(exgate.Order)) error {
	t := wsstream.NewOrders(emit)
	var heard time.Time
	send := t.Send
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
		if err := t.CatchUp(ctx, e, cred, s.Reconnect, heard); err != nil {
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
