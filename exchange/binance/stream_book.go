package binance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// bookSnapshotLimit is the depth of the REST snapshot a streamed book
// starts from: the limit web-socket-streams.md "How to manage a local
// order book correctly" uses, weight 50.
const bookSnapshotLimit = 1000

// maxResyncs is how many snapshots in a row one connection may take
// without the stream's updates lining up with them before it is dropped
// and a new one opened.
const maxResyncs = 3

// depthEvent is one <symbol>@depth@100ms message (web-socket-streams.md,
// "Diff. Depth Stream"): the levels changed between update ids U and u.
// Every member whose name differs only in case from another is declared,
// so encoding/json's case-insensitive matching cannot mix them up.
type depthEvent struct {
	Type      string      `json:"e"`
	EventTime int64       `json:"E"`
	Symbol    string      `json:"s"`
	FirstID   int64       `json:"U"`
	FinalID   int64       `json:"u"`
	Bids      [][2]string `json:"b"`
	Asks      [][2]string `json:"a"`
	// Members Binance may add whose names clash with the above.
	Side  json.RawMessage `json:"S"`
	Other json.RawMessage `json:"B"`
	Ask   json.RawMessage `json:"A"`
}

// parseDepthEvent reads a diff depth message and checks what the local
// book relies on: the type, ids in order, decimal levels.
func parseDepthEvent(b []byte) (depthEvent, error) {
	var ev depthEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		return depthEvent{}, fmt.Errorf("depth update: %w", err)
	}
	if ev.Type != "depthUpdate" {
		return depthEvent{}, fmt.Errorf("depth stream message of type %q: %s", ev.Type, rest.Truncate(b))
	}
	if ev.FirstID <= 0 || ev.FinalID < ev.FirstID {
		return depthEvent{}, fmt.Errorf("depth update with ids U=%d u=%d", ev.FirstID, ev.FinalID)
	}
	for _, side := range [][][2]string{ev.Bids, ev.Asks} {
		for _, l := range side {
			if p, err := exgate.ParseDecimal(l[0]); err != nil || !p.IsPositive() {
				return depthEvent{}, fmt.Errorf("depth update price %.40q is not a positive decimal", l[0])
			}
			if _, err := plainDecimal(l[1]); err != nil {
				return depthEvent{}, fmt.Errorf("depth update quantity: %w", err)
			}
		}
	}
	return ev, nil
}

// WatchBook streams the book of sym from <symbol>@depth@100ms, kept as
// web-socket-streams.md "How to manage a local order book correctly"
// says: the stream is opened first and its events held; a REST snapshot
// (GET /api/v3/depth, limit 1000) gives lastUpdateId; events with
// u <= lastUpdateId are dropped; the first applied one has
// U <= lastUpdateId+1 <= u, and each later one U = the previous u + 1.
// Anything else is a gap: it is logged, and a new snapshot is taken
// (after maxResyncs in a row, a new connection). A crossed book is
// treated as a gap too. The book is emitted, up to exgate.MaxStreamDepth
// levels a side, whenever those levels change.
func (e *Exchange) WatchBook(ctx context.Context, cred exgate.Credential, sym exgate.Symbol, emit func(exgate.OrderBook)) error {
	var last exgate.OrderBook
	sent := false
	send := func(b exgate.OrderBook) {
		if sent && sameLevels(b, last) {
			return
		}
		last, sent = b, true
		emit(b)
	}
	return e.run(ctx, "book "+sym.String(), func(ctx context.Context, s *wsstream.Session) error {
		// A new connection's first book goes out even when unchanged: the
		// caller heard the last one was lost (exgate.StreamLost).
		sent = false
		mk, err := e.markets.lookup(ctx, sym)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		conn, err := e.dial(ctx, e.stream.url+"/ws/"+strings.ToLower(mk.symbol)+"@depth@100ms")
		if err != nil {
			return err
		}
		frames := conn.frames(ctx, e.stream.idle)
		lb := &localBook{}
		for resyncs := 0; ; resyncs++ {
			if resyncs > maxResyncs {
				return fmt.Errorf("binance %s book: the stream and %d snapshots in a row do not line up", mk.symbol, resyncs)
			}
			if err := e.bookSnapshot(ctx, cred, mk, lb); err != nil {
				return err
			}
			send(lb.book.Snapshot(exgate.MaxStreamDepth))
			s.Live()
			err := lb.follow(ctx, frames, func() {
				resyncs = 0
				send(lb.book.Snapshot(exgate.MaxStreamDepth))
			})
			if _, gap := err.(*bookGap); !gap {
				return err
			}
			e.log.WarnContext(ctx, "binance book out of sequence; taking a new snapshot", "symbol", mk.symbol, "err", err)
			// The book sent last is wrong until the new snapshot's, which
			// goes out even when unchanged.
			exgate.StreamLost(ctx)
			sent = false
		}
	})
}

// localBook is a book with the update id it stands at.
type localBook struct {
	book wsstream.Book
	id   int64
	// synced is true once an event has been applied on the snapshot.
	synced bool
}

// bookGap is a break in the update ids (or a crossed book): the book
// must be taken anew.
type bookGap struct{ msg string }

func (g *bookGap) Error() string { return g.msg }

// bookSnapshot sets lb from GET /api/v3/depth.
func (e *Exchange) bookSnapshot(ctx context.Context, cred exgate.Credential, mk *market, lb *localBook) error {
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("limit", strconv.Itoa(bookSnapshotLimit))
	body, err := e.c.doText(ctx, request{ep: epDepth, params: p, weight: depthWeight(bookSnapshotLimit), sizeHint: 64 + 70*bookSnapshotLimit})
	if err != nil {
		return err
	}
	b, err := parseBook(body)
	if err != nil {
		return badAnswer(epDepth, err)
	}
	var id struct {
		LastUpdateID int64 `json:"lastUpdateId"`
	}
	if err := json.Unmarshal([]byte(body), &id); err != nil || id.LastUpdateID <= 0 {
		return badAnswer(epDepth, fmt.Errorf("depth answer without lastUpdateId"))
	}
	lb.book.Reset()
	for _, l := range b.bids {
		if err := lb.book.Set(wsstream.Bid, l.Price, l.Quantity); err != nil {
			return badAnswer(epDepth, err)
		}
	}
	for _, l := range b.asks {
		if err := lb.book.Set(wsstream.Ask, l.Price, l.Quantity); err != nil {
			return badAnswer(epDepth, err)
		}
	}
	lb.id, lb.synced = id.LastUpdateID, false
	return nil
}

// follow applies the stream's events until the connection fails or a
// gap shows; changed is called after each applied event.
func (lb *localBook) follow(ctx context.Context, frames <-chan frame, changed func()) error {
	for {
		b, err := next(ctx, frames)
		if err != nil {
			return err
		}
		ev, err := parseDepthEvent(b)
		if err != nil {
			return err
		}
		applied, err := lb.apply(ev)
		if err != nil {
			return err
		}
		if applied {
			changed()
		}
	}
}

// apply applies one event by the documented procedure; false when the
// event is older than the book.
func (lb *localBook) apply(ev depthEvent) (bool, error) {
	if ev.FinalID <= lb.id {
		return false, nil
	}
	if !lb.synced && ev.FirstID > lb.id+1 {
		return false, &bookGap{fmt.Sprintf("first update U=%d is past the snapshot's lastUpdateId %d + 1", ev.FirstID, lb.id)}
	}
	if lb.synced && ev.FirstID != lb.id+1 {
		return false, &bookGap{fmt.Sprintf("update U=%d does not follow u=%d", ev.FirstID, lb.id)}
	}
	for _, l := range ev.Bids {
		if err := lb.book.Set(wsstream.Bid, l[0], l[1]); err != nil {
			return false, err
		}
	}
	for _, l := range ev.Asks {
		if err := lb.book.Set(wsstream.Ask, l[0], l[1]); err != nil {
			return false, err
		}
	}
	lb.id, lb.synced = ev.FinalID, true
	if lb.book.Crossed() {
		return false, &bookGap{fmt.Sprintf("book crossed after update u=%d", ev.FinalID)}
	}
	return true, nil
}

// sameLevels reports whether two books emitted by one stream have the
// same levels (the strings as kept, so equal levels compare equal).
func sameLevels(a, b exgate.OrderBook) bool {
	return slices.Equal(a.Bids, b.Bids) && slices.Equal(a.Asks, b.Asks)
}
