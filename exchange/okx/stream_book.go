package okx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// The order book stream: the books channel (400 levels: a snapshot, then
// increments every 100 ms) kept as OKX's docs say (OKX API v5 docs,
// "Order book channel",
// https://www.okx.com/docs-v5/en/#order-book-trading-market-data-ws-order-book-channel):
// a size of 0 deletes a level, any other replaces or inserts it; an
// update's prevSeqId must be the seqId last applied (a keep-alive update
// repeats it with no change; seqId below prevSeqId is a sequence reset);
// after each message the CRC32 of the best 25 levels of each side,
// interleaved bid:ask as "px:sz" with the strings as received, must equal
// its checksum (a signed 32-bit integer). A gap, a reset or a mismatch
// drops the book and subscribes again on the same connection, which
// brings a new snapshot; nothing is emitted until it has come.

// booksChannel is the 400-level incremental book.
const booksChannel = "books"

// maxResubscribes is how many resubscriptions in a row may fail to give a
// consistent book before the connection is dropped and made again.
const maxResubscribes = 5

// bookData is one books push's data item.
type bookData struct {
	Asks      [][]text `json:"asks"`
	Bids      [][]text `json:"bids"`
	Checksum  *int64   `json:"checksum"`
	PrevSeqID *int64   `json:"prevSeqId"`
	SeqID     *int64   `json:"seqId"`
}

// bookPush is one parsed books push.
type bookPush struct {
	snapshot     bool
	bids, asks   [][2]string
	checksum     int32
	hasChecksum  bool
	prevSeq, seq int64
}

// parseBookPush reads a books push's action and data.
func parseBookPush(action string, raw []byte) (bookPush, error) {
	var items []bookData
	if err := json.Unmarshal(raw, &items); err != nil {
		return bookPush{}, fmt.Errorf("book push: %w", err)
	}
	if len(items) != 1 {
		return bookPush{}, fmt.Errorf("book push with %d items, want 1", len(items))
	}
	d := items[0]
	if d.SeqID == nil || d.PrevSeqID == nil {
		return bookPush{}, errors.New("book push without seqId or prevSeqId")
	}
	p := bookPush{snapshot: action == "snapshot", prevSeq: *d.PrevSeqID, seq: *d.SeqID}
	switch action {
	case "snapshot", "update":
	default:
		return bookPush{}, fmt.Errorf("book push with action %q", action)
	}
	if d.Checksum != nil {
		if *d.Checksum < -1<<31 || *d.Checksum >= 1<<32 {
			return bookPush{}, fmt.Errorf("book push checksum %d out of range", *d.Checksum)
		}
		p.checksum, p.hasChecksum = int32(*d.Checksum), true
	}
	var err error
	if p.bids, err = levelStrings(d.Bids); err != nil {
		return bookPush{}, fmt.Errorf("book push bids: %w", err)
	}
	if p.asks, err = levelStrings(d.Asks); err != nil {
		return bookPush{}, fmt.Errorf("book push asks: %w", err)
	}
	return p, nil
}

// bookChecksum is OKX's checksum of a book: the best 25 bids and asks
// interleaved "bidPx:bidSz:askPx:askSz:...", a side that runs out skipped,
// CRC32 (IEEE) as a signed 32-bit integer.
func bookChecksum(bids, asks []exgate.Level) int32 {
	var b strings.Builder
	for i := range 25 {
		for _, side := range [][]exgate.Level{bids, asks} {
			if i < len(side) {
				if b.Len() > 0 {
					b.WriteByte(':')
				}
				b.WriteString(side[i].Price)
				b.WriteByte(':')
				b.WriteString(side[i].Quantity)
			}
		}
	}
	return int32(crc32.ChecksumIEEE([]byte(b.String())))
}

// errBookOutOfSync is a push that does not go on from the book, or a book
// whose checksum is not OKX's.
var errBookOutOfSync = errors.New("okx book out of sync")

// bookSync is a book kept from a snapshot plus updates by seqId.
type bookSync struct {
	book wsstream.Book
	seq  int64
	live bool // a snapshot has been applied
}

// apply applies a push; changed is false for one that changes nothing (a
// keep-alive, or an update before the snapshot). A gap, a reset, a bad
// level, a crossed book or a checksum mismatch is an error, after which
// the book must come from a new snapshot.
func (b *bookSync) apply(p bookPush) (changed bool, err error) {
	switch {
	case p.snapshot:
		b.book.Reset()
	case !b.live:
		return false, nil // waiting for the snapshot
	case p.seq < p.prevSeq:
		b.live = false
		return false, fmt.Errorf("%w: sequence reset %d after %d", errBookOutOfSync, p.seq, p.prevSeq)
	case p.prevSeq != b.seq:
		b.live = false
		return false, fmt.Errorf("%w: update %d..%d after %d", errBookOutOfSync, p.prevSeq, p.seq, b.seq)
	case p.seq == p.prevSeq && len(p.bids) == 0 && len(p.asks) == 0:
		return false, nil // keep-alive
	}
	for _, side := range []struct {
		s      wsstream.Side
		levels [][2]string
	}{{wsstream.Bid, p.bids}, {wsstream.Ask, p.asks}} {
		for _, l := range side.levels {
			if err := b.book.Set(side.s, l[0], l[1]); err != nil {
				b.live = false
				return false, fmt.Errorf("%w: %w", errBookOutOfSync, err)
			}
		}
	}
	if b.book.Crossed() {
		b.live = false
		return false, fmt.Errorf("%w: crossed after %d", errBookOutOfSync, p.seq)
	}
	if p.hasChecksum {
		if got := bookChecksum(b.book.Levels(wsstream.Bid, 25), b.book.Levels(wsstream.Ask, 25)); got != p.checksum {
			b.live = false
			return false, fmt.Errorf("%w: checksum %d, OKX says %d (seqId %d)", errBookOutOfSync, got, p.checksum, p.seq)
		}
	}
	b.seq, b.live = p.seq, true
	return true, nil
}

// WatchBook emits the book of sym on every change (see the comment at the
// top of this file).
func (e *Exchange) WatchBook(ctx context.Context, _ exgate.Credential, sym exgate.Symbol, emit func(exgate.OrderBook)) error {
	return wsstream.Run(ctx, e.runConfig("book "+sym.String()), func(ctx context.Context, s *wsstream.Session) error {
		p, err := e.markets.Lookup(ctx, sym)
		if err != nil {
			return err
		}
		c, err := e.dial(ctx, "public")
		if err != nil {
			return err
		}
		defer c.close()
		arg := wsArg{Channel: booksChannel, InstID: p.id}
		if err := c.send(ctx, "subscribe", arg); err != nil {
			return err
		}
		var b bookSync
		resubscribes := 0
		for {
			m, _, err := c.next(ctx, nil)
			if err != nil {
				return err
			}
			if done, err := c.ack(m, "subscribe", arg); done {
				if err != nil {
					return err
				}
				continue
			}
			if done, _ := c.ack(m, "unsubscribe", arg); done {
				if err := c.send(ctx, "subscribe", arg); err != nil {
					return err
				}
				continue
			}
			if m.Arg.Channel != booksChannel || m.Arg.InstID != p.id || m.Event != "" {
				continue
			}
			bp, err := parseBookPush(m.Action, m.Data)
			if err != nil {
				return err
			}
			changed, err := b.apply(bp)
			if err != nil {
				e.log.WarnContext(ctx, "okx book out of sync; subscribing again", "instId", p.id, "err", err)
				exgate.StreamLost(ctx) // the book emitted last is wrong until the new snapshot
				if resubscribes++; resubscribes > maxResubscribes {
					return fmt.Errorf("okx book of %s: %d resubscriptions in a row gave no consistent book: %w", p.id, maxResubscribes, err)
				}
				if err := c.send(ctx, "unsubscribe", arg); err != nil {
					return err
				}
				continue
			}
			if changed {
				if bp.snapshot {
					s.Live()
				} else {
					resubscribes = 0
				}
				emit(b.book.Snapshot(exgate.MaxStreamDepth))
			}
		}
	})
}
