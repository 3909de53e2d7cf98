package bybit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// The book stream: orderbook.200.{symbol} (200 levels pushed every 100
// ms, the smallest spot depth that covers exgate.MaxStreamDepth). Source:
// https://bybit-exchange.github.io/docs/v5/websocket/public/orderbook.
// The first message is a snapshot, then deltas: size "0" deletes a level,
// a new price inserts one, a known one is replaced; a snapshot at any time
// resets the book. Bybit has no checksum: the update id u is the
// integrity check. Bybit does not document that consecutive deltas have
// consecutive u; the adapter takes u = previous u + 1 as the rule (as
// Bybit's own examples show) and treats anything else as a gap: the
// connection is dropped and a new subscription brings a new snapshot. A
// crossed book is a gap too.

// bookDepth is the topic's depth.
const bookDepth = 200

// bookMessage is one orderbook push.
type bookMessage struct {
	snapshot   bool
	u          int64
	bids, asks []level
}

// parseBookMessage reads an orderbook push's type and data.
func parseBookMessage(typ string, data json.RawMessage) (bookMessage, error) {
	if typ != "snapshot" && typ != "delta" {
		return bookMessage{}, fmt.Errorf("orderbook message of type %q", typ)
	}
	var d bookJSON
	if err := json.Unmarshal(data, &d); err != nil {
		return bookMessage{}, fmt.Errorf("orderbook message: %w", err)
	}
	if d.U <= 0 {
		return bookMessage{}, fmt.Errorf("orderbook message without an update id")
	}
	m := bookMessage{snapshot: typ == "snapshot", u: d.U}
	var err error
	if m.bids, err = levels(d.Bids, !m.snapshot); err != nil {
		return bookMessage{}, err
	}
	if m.asks, err = levels(d.Asks, !m.snapshot); err != nil {
		return bookMessage{}, err
	}
	return m, nil
}

// bookSync applies the pushes to a book.
type bookSync struct {
	book   wsstream.Book
	u      int64
	synced bool
}

// apply applies one push; a delta before a snapshot, one whose u does not
// follow, or one that leaves the book crossed is an error (resync).
func (b *bookSync) apply(m bookMessage) error {
	if m.snapshot {
		b.book.Reset()
		b.u, b.synced = m.u, true
	} else {
		if !b.synced {
			return fmt.Errorf("orderbook delta before the snapshot")
		}
		if m.u != b.u+1 {
			return fmt.Errorf("orderbook gap: update %d after %d", m.u, b.u)
		}
		b.u = m.u
	}
	for _, l := range m.bids {
		if err := b.book.Set(wsstream.Bid, l.p, l.q); err != nil {
			return err
		}
	}
	for _, l := range m.asks {
		if err := b.book.Set(wsstream.Ask, l.p, l.q); err != nil {
			return err
		}
	}
	if b.book.Crossed() {
		return fmt.Errorf("orderbook crossed after update %d", b.u)
	}
	return nil
}

// WatchBook emits the pair's book on every push (see the comment at the
// top of this file). An unknown pair ends it with UNKNOWN_SYMBOL.
func (e *Exchange) WatchBook(ctx context.Context, _ exgate.Credential, sym exgate.Symbol, emit func(exgate.OrderBook)) error {
	p, err := e.markets.Lookup(ctx, sym)
	if err != nil {
		return err
	}
	topic := fmt.Sprintf("orderbook.%d.%s", bookDepth, p.id)
	return wsstream.Run(ctx, e.runConfig("book "+p.id), func(ctx context.Context, s *wsstream.Session) error {
		c, err := e.dial(ctx, e.stream.url)
		if err != nil {
			return err
		}
		defer c.close()
		var pending []wsMessage
		if err := c.request(ctx, "subscribe", []any{topic}, &pending); err != nil {
			return err
		}
		var b bookSync
		handle := func(m wsMessage) error {
			if m.Topic != topic {
				return nil
			}
			bm, err := parseBookMessage(m.Type, m.Data)
			if err != nil {
				return err
			}
			if err := b.apply(bm); err != nil {
				e.log.WarnContext(ctx, "bybit book out of sync; resubscribing", "symbol", p.id, "err", err)
				return err
			}
			if b.synced {
				s.Live()
				emit(b.book.Snapshot(exgate.MaxStreamDepth))
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
