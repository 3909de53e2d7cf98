package gateio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// The order book stream: spot.order_book_update at 100ms (the 100-level
// book) kept from the REST snapshot GET /spot/order_book?with_id=true,
// following Gate WS docs, "Order Book Channel", "How to maintain local
// order book": updates with u < id+1 are dropped, the first applied one
// has U <= id+1 <= u, and every later one must go on from the last
// applied (U <= last+1 <= u); anything else is a gap and the book is
// rebuilt from a new snapshot before anything more is emitted. A message
// with full=true replaces the book (Gate sends one when it resets the
// stream).

// bookStreamDepth is the depth of the 100ms update stream and of the
// snapshot it is kept from.
const bookStreamDepth = 100

// bookChannel is the channel of the incremental book.
const bookChannel = "spot.order_book_update"

// maxSnapshotsInRow is how many snapshots in a row may fail to join the
// update stream before the connection is dropped and made again.
const maxSnapshotsInRow = 5

// bookUpdate is one spot.order_book_update result.
type bookUpdate struct {
	Pair  string
	Full  bool
	First int64 // U
	Last  int64 // u
	Bids  [][2]string
	Asks  [][2]string
}

// bookUpdateJSON is the wire shape (both U and u are there, so the exact
// tags win over encoding/json's case-insensitive match).
type bookUpdateJSON struct {
	T     int64    `json:"t"`
	Full  bool     `json:"full"`
	S     string   `json:"s"`
	First int64    `json:"U"`
	Last  int64    `json:"u"`
	Bids  [][]text `json:"b"`
	Asks  [][]text `json:"a"`
}

// parseBookUpdate reads the result of a spot.order_book_update update.
// Amounts are absolute; zero removes the price.
func parseBookUpdate(raw []byte) (bookUpdate, error) {
	var j bookUpdateJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return bookUpdate{}, fmt.Errorf("book update: %w", err)
	}
	if j.S == "" || j.Last <= 0 || (!j.Full && (j.First <= 0 || j.First > j.Last)) {
		return bookUpdate{}, fmt.Errorf("book update with pair %q and ids %d..%d", j.S, j.First, j.Last)
	}
	u := bookUpdate{Pair: j.S, Full: j.Full, First: j.First, Last: j.Last}
	var err error
	if u.Bids, err = levelStrings(j.Bids); err != nil {
		return bookUpdate{}, fmt.Errorf("book update bids: %w", err)
	}
	if u.Asks, err = levelStrings(j.Asks); err != nil {
		return bookUpdate{}, fmt.Errorf("book update asks: %w", err)
	}
	return u, nil
}

// errBookGap is an update that does not go on from the book.
var errBookGap = errors.New("gateio book update out of sequence")

// bookSync is a book kept from a snapshot plus updates by update id.
type bookSync struct {
	book wsstream.Book
	// id is the last update id in the book; 0 while there is no snapshot.
	id int64
}

// snapshot replaces the book with a REST snapshot of update id.
func (b *bookSync) snapshot(id int64, bids, asks []level) {
	b.book.Reset()
	for _, l := range bids {
		_ = b.book.Set(wsstream.Bid, l.price, l.qty) // parsed positive decimals
	}
	for _, l := range asks {
		_ = b.book.Set(wsstream.Ask, l.price, l.qty)
	}
	b.id = id
}

// apply applies an update. changed is false for an update the book
// already holds; a gap, a bad level or a crossed book is an error, after
// which the book must be rebuilt (id is then 0).
func (b *bookSync) apply(u bookUpdate) (changed bool, err error) {
	switch {
	case u.Full:
		b.book.Reset()
	case b.id == 0:
		return false, nil // waiting for a snapshot: the snapshot's id decides
	case u.Last <= b.id:
		return false, nil // already in the snapshot
	case u.First > b.id+1:
		want := b.id + 1
		b.id = 0
		return false, fmt.Errorf("%w: update %d..%d after %d", errBookGap, u.First, u.Last, want-1)
	}
	for _, side := range []struct {
		s      wsstream.Side
		levels [][2]string
	}{{wsstream.Bid, u.Bids}, {wsstream.Ask, u.Asks}} {
		for _, l := range side.levels {
			if err := b.book.Set(side.s, l[0], l[1]); err != nil {
				b.id = 0
				return false, fmt.Errorf("gateio book update %d..%d: %w", u.First, u.Last, err)
			}
		}
	}
	b.book.Truncate(bookStreamDepth)
	if b.book.Crossed() {
		b.id = 0
		return false, fmt.Errorf("gateio book crossed after update %d..%d", u.First, u.Last)
	}
	b.id = u.Last
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
		c, err := e.dial(ctx)
		if err != nil {
			return err
		}
		defer c.close()
		if err := c.subscribe(ctx, bookChannel, []string{p.id, "100ms"}, nil); err != nil {
			return err
		}
		var b bookSync
		subscribed, snapshots := false, 0
		// resync reads a new snapshot; the updates that arrived meanwhile
		// wait in the connection and are matched against its id.
		resync := func() error {
			if snapshots++; snapshots > maxSnapshotsInRow {
				return fmt.Errorf("gateio book of %s: %d snapshots in a row did not join the update stream", p.id, maxSnapshotsInRow)
			}
			id, bids, asks, err := e.bookWithID(ctx, p)
			if err != nil {
				return err
			}
			b.snapshot(id, bids, asks)
			emit(b.book.Snapshot(exgate.MaxStreamDepth))
			s.Live()
			return nil
		}
		for {
			m, _, err := c.next(ctx, nil)
			if err != nil {
				return err
			}
			if done, err := c.answered(m, bookChannel); done {
				if err != nil {
					return err
				}
				subscribed = true
				if err := resync(); err != nil {
					return err
				}
				continue
			}
			if m.Channel != bookChannel || m.Event != "update" {
				continue
			}
			u, err := parseBookUpdate(m.Result)
			if err != nil {
				return err
			}
			if u.Pair != p.id {
				continue
			}
			changed, err := b.apply(u)
			if err != nil {
				e.log.WarnContext(ctx, "gateio book out of sync; resynchronizing", "pair", p.id, "err", err)
				exgate.StreamLost(ctx) // the book emitted last is wrong until the new snapshot
				if !subscribed {
					continue
				}
				if err := resync(); err != nil {
					return err
				}
				continue
			}
			if changed {
				snapshots = 0
				if u.Full {
					s.Live()
				}
				emit(b.book.Snapshot(exgate.MaxStreamDepth))
			}
		}
	})
}

// bookWithID reads the stream's base book with its update id.
func (e *Exchange) bookWithID(ctx context.Context, p *pair) (int64, []level, []level, error) {
	var ps rest.Params
	ps.Add("currency_pair", p.id)
	ps.Add("limit", strconv.Itoa(bookStreamDepth))
	ps.Add("with_id", "true")
	body, err := e.c.do(ctx, request{ep: epBook, params: ps})
	if err != nil {
		return 0, nil, nil, err
	}
	id, bids, asks, err := parseBookWithID(body)
	if err != nil {
		return 0, nil, nil, badAnswer(epBook, err)
	}
	return id, bids, asks, nil
}
