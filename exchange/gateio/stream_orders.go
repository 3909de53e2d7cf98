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

// WatchOrders emits every change of cred's orders (see the comment at the
// top of this file). A refused key ends it with EXCHANGE_AUTH_FAILED.
func (e *Exchange) WatchOrders(ctx context.Context, cred exgate.Credential, emit func(exgate.Order)) error {
	t := wsstream.NewOrders(emit)
	// heard is when the last session last heard from Gate: changes since
	// then are brought up to date after a reconnect.
	var heard time.Time
	send := t.Send
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
				if err := t.CatchUp(ctx, e, cred, s.Reconnect, heard); err != nil {
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
