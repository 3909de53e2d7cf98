package risk

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

// fakeBooks is a LiveBooks whose holds the test sees start and end, and
// whose books are live when the test says so.
type fakeBooks struct {
	mu     sync.Mutex
	live   map[bookKey]exgate.OrderBook
	refuse error
	held   map[bookKey]int // holds running
	starts chan bookKey
	ends   chan bookKey
}

func newFakeBooks() *fakeBooks {
	return &fakeBooks{live: map[bookKey]exgate.OrderBook{}, held: map[bookKey]int{},
		starts: make(chan bookKey, 10), ends: make(chan bookKey, 10)}
}

func (f *fakeBooks) LiveBook(exchange string, sym exgate.Symbol) (exgate.OrderBook, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.live[bookKey{exchange, sym}]
	return b, ok
}

func (f *fakeBooks) HoldBook(ctx context.Context, exchange string, sym exgate.Symbol) error {
	k := bookKey{exchange, sym}
	f.mu.Lock()
	refuse := f.refuse
	f.held[k]++
	f.mu.Unlock()
	f.starts <- k
	defer func() {
		f.mu.Lock()
		f.held[k]--
		f.mu.Unlock()
		f.ends <- k
	}()
	if refuse != nil {
		return refuse
	}
	<-ctx.Done()
	return nil
}

func recv(t *testing.T, ch chan bookKey, what string) bookKey {
	t.Helper()
	select {
	case k := <-ch:
		return k
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s", what)
		return bookKey{}
	}
}

func noRecv(t *testing.T, ch chan bookKey, what string) {
	t.Helper()
	select {
	case k := <-ch:
		t.Fatalf("unexpected %s of %v", what, k)
	default:
	}
}

// TestHeldBooks: the first lookup of a pair starts one hold (only while
// Run runs); lookups keep it; BookHold without one ends it; a refused
// pair is asked for again only after bookRetry; stop ends every hold.
func TestHeldBooks(t *testing.T) {
	f := newFakeBooks()
	now := time.Unix(1_700_000_000, 0)
	h := &heldBooks{books: f, hold: 5 * time.Minute, now: func() time.Time { return now }, held: map[bookKey]*heldBook{}}
	btc := exgate.Symbol{Base: "BTC", Quote: "USDT"}
	key := bookKey{"binance", btc}

	// Before Run: no hold.
	if _, ok := h.book("binance", btc); ok {
		t.Fatal("a live book with none")
	}
	if h.heldCount() != 0 {
		t.Fatal("a hold started before Run")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h.start(ctx)
	h.book("binance", btc)
	h.book("binance", btc)
	if k := recv(t, f.starts, "hold"); k != key {
		t.Fatalf("hold of %v", k)
	}
	if n := h.heldCount(); n != 1 {
		t.Fatalf("%d holds for one pair", n)
	}
	noRecv(t, f.starts, "second hold")
	want := exgate.OrderBook{Bids: []exgate.Level{{Price: "1", Quantity: "1"}}}
	f.mu.Lock()
	f.live[key] = want
	f.mu.Unlock()
	if b, ok := h.book("binance", btc); !ok || b.Bids[0] != want.Bids[0] {
		t.Fatalf("book = %v, %v", b, ok)
	}
	// Used 4 minutes ago: kept; 5 minutes without a lookup: ended.
	now = now.Add(4 * time.Minute)
	h.sweep()
	h.book("binance", btc)
	now = now.Add(4*time.Minute + 59*time.Second)
	h.sweep()
	noRecv(t, f.ends, "end")
	now = now.Add(time.Second)
	h.sweep()
	recv(t, f.ends, "end of the idle hold")
	if h.heldCount() != 0 {
		t.Fatal("the idle hold is still counted")
	}

	// A refused pair: one try, then none until bookRetry has passed.
	f.mu.Lock()
	f.refuse = exgate.Errorf(exgate.CodeUnknownSymbol, "no such pair")
	f.mu.Unlock()
	nope := exgate.Symbol{Base: "NOPE", Quote: "USDT"}
	h.book("binance", nope)
	recv(t, f.starts, "hold of the refused pair")
	recv(t, f.ends, "refusal")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		h.mu.Lock()
		noted := !h.held[bookKey{"binance", nope}].retry.IsZero()
		h.mu.Unlock()
		if noted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the refusal was not noted")
		}
	}
	h.book("binance", nope)
	now = now.Add(bookRetry - time.Second)
	h.sweep()
	h.book("binance", nope)
	noRecv(t, f.starts, "hold of the refused pair within bookRetry")
	now = now.Add(time.Second)
	h.sweep()
	f.mu.Lock()
	f.refuse = nil
	f.mu.Unlock()
	h.book("binance", nope)
	recv(t, f.starts, "hold of the refused pair after bookRetry")

	// stop ends every hold, and none starts after it.
	h.book("binance", btc)
	recv(t, f.starts, "hold")
	h.stop()
	recv(t, f.ends, "end at stop")
	recv(t, f.ends, "end at stop")
	h.book("binance", btc)
	noRecv(t, f.starts, "hold after stop")
	if h.heldCount() != 0 {
		t.Fatalf("%d holds after stop", h.heldCount())
	}
}

// heldCount is how many pairs have a subscription held (or refused).
func (h *heldBooks) heldCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.held)
}
