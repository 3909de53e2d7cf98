package risk

import (
	"context"
	"sync"
	"time"

	"github.com/exgate/exgate"
)

// LiveBooks is a live source of order books: the gateway's stream hub
// (stream.Hub), whose upstream subscriptions keep each pair's book from
// the exchange's snapshot plus its pushed updates.
type LiveBooks interface {
	// LiveBook returns the current book of sym on exchange, ok false
	// when no subscription has one now.
	LiveBook(exchange string, sym exgate.Symbol) (b exgate.OrderBook, ok bool)
	// HoldBook holds a subscription to the book of sym open until ctx
	// ends; it returns early when the exchange refuses it.
	HoldBook(ctx context.Context, exchange string, sym exgate.Symbol) error
}

// Defaults of Options.BookHold and of the wait before a pair whose
// subscription was refused is asked for again.
const (
	DefaultBookHold = 5 * time.Minute
	bookRetry       = time.Minute
)

type bookKey struct {
	exchange string
	sym      exgate.Symbol
}

// heldBooks keeps a live subscription open to the book of every pair the
// checks price, from the first order that needs it until BookHold has
// passed without one: the checks then read the book the exchange streams
// instead of asking its REST API for it on every order. While Run is not
// running, or a pair has no live book yet, the checks read it from the
// exchange as before.
type heldBooks struct {
	books LiveBooks
	hold  time.Duration
	now   func() time.Time

	mu sync.Mutex
	// ctx is Run's, nil while Run is not running: the subscriptions
	// end with it.
	ctx  context.Context
	held map[bookKey]*heldBook
}

type heldBook struct {
	used   time.Time
	cancel context.CancelFunc
	// retry, when set, is when a subscription the exchange refused may
	// be asked for again; until then the pair's book is read over REST.
	retry time.Time
}

// book returns the live book of sym on exchange, and has one held when
// there is none.
func (h *heldBooks) book(exchange string, sym exgate.Symbol) (exgate.OrderBook, bool) {
	if h == nil {
		return exgate.OrderBook{}, false
	}
	b, ok := h.books.LiveBook(exchange, sym)
	key := bookKey{exchange, sym}
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if hb := h.held[key]; hb != nil {
		hb.used = now
		return b, ok
	}
	if h.ctx != nil {
		ctx, cancel := context.WithCancel(h.ctx)
		hb := &heldBook{used: now, cancel: cancel}
		h.held[key] = hb
		go h.run(ctx, key, hb)
	}
	return b, ok
}

// run holds key's subscription until its context ends, or notes the
// exchange's refusal.
func (h *heldBooks) run(ctx context.Context, key bookKey, hb *heldBook) {
	err := h.books.HoldBook(ctx, key.exchange, key.sym)
	h.mu.Lock()
	defer h.mu.Unlock()
	if ctx.Err() == nil && h.held[key] == hb {
		if err == nil {
			delete(h.held, key) // the hub let go: ask again at the next order
			return
		}
		hb.retry = h.now().Add(bookRetry)
	}
}

// start makes ctx the subscriptions' context (Run's).
func (h *heldBooks) start(ctx context.Context) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.ctx = ctx
	h.mu.Unlock()
}

// stop ends every subscription held.
func (h *heldBooks) stop() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ctx = nil
	for key, hb := range h.held {
		hb.cancel()
		delete(h.held, key)
	}
}

// sweep ends the subscriptions no order used for BookHold, and forgets
// the refusals whose wait has passed.
func (h *heldBooks) sweep() {
	if h == nil {
		return
	}
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for key, hb := range h.held {
		if (hb.retry.IsZero() && now.Sub(hb.used) >= h.hold) || (!hb.retry.IsZero() && !now.Before(hb.retry)) {
			hb.cancel()
			delete(h.held, key)
		}
	}
}
