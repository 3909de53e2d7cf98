package okx

import (
	"context"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// The order stream: the orders channel of instType SPOT on /ws/v5/private
// after a login (OKX API v5 docs, "Order channel",
// https://www.okx.com/docs-v5/en/#order-book-trading-trade-ws-order-channel),
// which pushes the order object of GET /trade/order on every change; each
// goes through the same conversion as the REST lookups (orderFromOKX).
// The open orders are read from REST when the subscription is live; after
// a reconnect the recent orders of every pair the stream has seen are read
// too, so a change made while the stream was down is emitted.

// WatchOrders emits every change of cred's orders (see the comment at the
// top of this file). A refused key ends it with EXCHANGE_AUTH_FAILED.
func (e *Exchange) WatchOrders(ctx context.Context, cred exgate.Credential, emit func(exgate.Order)) error {
	t := wsstream.NewOrders(emit)
	// heard is when the last session last heard from OKX: changes since
	// then are brought up to date after a reconnect.
	var heard time.Time
	send := t.Send
	return wsstream.Run(ctx, e.runConfig("orders "+cred.Name), func(ctx context.Context, s *wsstream.Session) error {
		if !e.c.learned.Load() {
			e.c.resync(ctx)
		}
		c, err := e.dial(ctx, "private")
		if err != nil {
			return err
		}
		defer c.close()
		if err := c.login(ctx, cred); err != nil {
			return err
		}
		arg := wsArg{Channel: "orders", InstType: "SPOT"}
		if err := c.send(ctx, "subscribe", arg); err != nil {
			return err
		}
		live := false
		var early []orderJSON // pushes before the catch-up is done
		for {
			m, _, err := c.next(ctx, nil)
			if err != nil {
				return err
			}
			if done, err := c.ack(m, "subscribe", arg); done {
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
					e.emitOKX(ctx, o, send)
				}
				early = nil
				continue
			}
			if m.Arg.Channel != "orders" || m.Event != "" {
				continue
			}
			os, err := parseOrders(m.Data)
			if err != nil {
				return err
			}
			if !live {
				early = append(early, os...)
				continue
			}
			heard = e.c.Now()
			for _, o := range os {
				e.emitOKX(ctx, o, send)
			}
		}
	})
}

// emitOKX converts one of OKX's orders and emits it.
func (e *Exchange) emitOKX(ctx context.Context, o orderJSON, send func(exgate.Order)) {
	p, err := e.pairByID(ctx, o.InstID)
	if err != nil {
		e.log.WarnContext(ctx, "okx order push of an unknown instrument; skipped", "instId", o.InstID, "ordId", o.OrdID, "err", err)
		return
	}
	send(e.orderFromOKX(p, o, ""))
}
