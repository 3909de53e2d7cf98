package kraken

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// bookDepth is the depth of the adapter's book subscriptions: one of
// Kraken's 10, 25, 100, 500, 1000 (docs.kraken.com "Book (Level 2)"), the
// one that covers exgate.MaxStreamDepth.
const bookDepth = 100

// checksumLevels is how many levels per side Kraken's CRC32 covers
// (docs.kraken.com "Book checksum (WebSocket v2)").
const checksumLevels = 10

// wsLevel is one price level of a book message; Kraken v2 writes both as
// JSON numbers, read exactly (rest.Decimal, never float64).
type wsLevel struct {
	Price rest.Decimal `json:"price"`
	Qty   rest.Decimal `json:"qty"`
}

// wsBook is one data item of a book snapshot or update.
type wsBook struct {
	Symbol    string    `json:"symbol"`
	Bids      []wsLevel `json:"bids"`
	Asks      []wsLevel `json:"asks"`
	Checksum  *uint32   `json:"checksum"`
	Timestamp string    `json:"timestamp"`
}

// parseBook parses the data of a book message.
func parseBook(raw json.RawMessage) ([]wsBook, error) {
	var out []wsBook
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("kraken ws: unparseable book data: %w", err)
	}
	for _, d := range out {
		for _, side := range [][]wsLevel{d.Bids, d.Asks} {
			for _, l := range side {
				if !l.Price.Set || !l.Qty.Set {
					return nil, errors.New("kraken ws: a book level without price or qty")
				}
			}
		}
	}
	return out, nil
}

// krakenBook is a book of one pair kept as Kraken's docs describe:
// levels written with the pair's price and quantity precision, truncated
// to the subscribed depth after every update, checked by CRC32.
type krakenBook struct {
	wsstream.Book
	priceDecimals, qtyDecimals int32
}

// apply applies a snapshot (after emptying the book) or an update, then
// truncates the book to the subscribed depth (Kraken sends no removal for
// levels that fall out of it).
func (b *krakenBook) apply(d wsBook, snapshot bool) error {
	if snapshot {
		b.Reset()
	}
	for _, s := range []struct {
		side   wsstream.Side
		levels []wsLevel
	}{{wsstream.Bid, d.Bids}, {wsstream.Ask, d.Asks}} {
		for _, l := range s.levels {
			if err := b.Set(s.side, l.Price.StringFixed(b.priceDecimals), l.Qty.StringFixed(b.qtyDecimals)); err != nil {
				return err
			}
		}
	}
	b.Truncate(bookDepth)
	return nil
}

// checksum is Kraken's CRC32 of the top ten asks (low to high) then the
// top ten bids (high to low), each level's price and quantity written
// with the pair's precision, the decimal point and leading zeros removed.
// Source: docs.kraken.com "Book checksum (WebSocket v2)".
func (b *krakenBook) checksum() uint32 {
	var sb strings.Builder
	for _, side := range []wsstream.Side{wsstream.Ask, wsstream.Bid} {
		for _, l := range b.Levels(side, checksumLevels) {
			sb.WriteString(checksumField(l.Price))
			sb.WriteString(checksumField(l.Quantity))
		}
	}
	return crc32.ChecksumIEEE([]byte(sb.String()))
}

func checksumField(s string) string {
	return strings.TrimLeft(strings.Replace(s, ".", "", 1), "0")
}

// WatchBook streams the book of sym from Kraken's v2 book channel at
// depth 100: the snapshot, then each update applied, truncated to 100
// levels and checked against Kraken's CRC32. A mismatch (or a crossed
// book) is logged and the pair resubscribed on the same connection for a
// new snapshot; nothing is emitted until it arrives.
func (e *Exchange) WatchBook(ctx context.Context, _ exgate.Credential, sym exgate.Symbol, emit func(exgate.OrderBook)) error {
	return e.run(ctx, "book "+sym.String(), func(ctx context.Context, s *wsstream.Session) error {
		mk, c, err := e.dialPair(ctx, sym)
		if err != nil {
			return err
		}
		defer c.close()
		name := mk.v2Symbol()
		params := subscribeParams{Channel: "book", Symbol: []string{name}, Depth: bookDepth, Snapshot: ptr(true)}
		if err := c.send(ctx, subscribeRequest{Method: "subscribe", Params: params}); err != nil {
			return err
		}
		book := krakenBook{priceDecimals: mk.pairDecimals, qtyDecimals: mk.lotDecimals}
		synced := false
		for {
			msg, err := c.next(ctx)
			if err != nil {
				return err
			}
			if msg.Channel != "book" {
				continue
			}
			items, err := parseBook(msg.Data)
			if err != nil {
				return err
			}
			for _, d := range items {
				if d.Symbol != name {
					continue
				}
				snapshot := msg.Type == "snapshot"
				if !snapshot && !synced {
					continue // an update of the subscription being replaced
				}
				if err := book.apply(d, snapshot); err != nil {
					return err
				}
				synced = true
				if d.Checksum != nil && book.checksum() != *d.Checksum || book.Crossed() {
					e.log.WarnContext(ctx, "kraken book out of sync; resubscribing", "pair", name, "type", msg.Type)
					exgate.StreamLost(ctx) // the book emitted last is wrong until the new snapshot
					synced = false
					if err := c.send(ctx, subscribeRequest{Method: "unsubscribe", Params: subscribeParams{Channel: "book", Symbol: []string{name}, Depth: bookDepth}}); err != nil {
						return err
					}
					if err := c.send(ctx, subscribeRequest{Method: "subscribe", Params: params}); err != nil {
						return err
					}
					continue
				}
				s.Live()
				emit(book.Snapshot(exgate.MaxStreamDepth))
			}
		}
	})
}
