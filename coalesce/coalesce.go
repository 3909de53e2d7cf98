// Package coalesce lets identical concurrent market-data requests share one
// upstream call. Klines and order books are public: a thousand clients
// asking for the same book at the same moment need one answer from the
// exchange, not a thousand, which both saves the exchange's rate budget and
// answers faster. The shared answer is also encoded to JSON once.
package coalesce

import (
	"context"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
)

// Exchange wraps an exchange so that concurrent identical RecentKlines and
// OrderBook calls share one upstream call, and an answer may be reused for
// up to MaxAge after it arrived. Everything else passes through.
type Exchange struct {
	exgate.Exchange
	maxAge time.Duration
	now    func() time.Time
	group  singleflight.Group
	cache  *recent
	hit    func(kind string)
}

// Options configures the wrapper.
type Options struct {
	// MaxAge is how long a market-data answer may be served again after
	// it arrived; zero shares only calls that overlap in time.
	MaxAge time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Hit, when set, is called for each request answered by another's
	// exchange call (kind "klines" or "book"): metrics.
	Hit func(kind string)
}

// New wraps ex.
func New(ex exgate.Exchange, opts Options) *Exchange {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Exchange{Exchange: ex, maxAge: opts.MaxAge, now: now, cache: newRecent(4096), hit: opts.Hit}
}

var _ exgate.Exchange = (*Exchange)(nil)

// answer is one shared upstream answer with its JSON, encoded at most once.
type answer struct {
	klines []exgate.Kline
	book   exgate.OrderBook

	once sync.Once
	json []byte
}

func (a *answer) encoded() []byte {
	a.once.Do(func() {
		switch {
		case a.json != nil: // the adapter answered in JSON
		case a.klines != nil:
			a.json = exgate.AppendKlinesJSON(make([]byte, 0, len(a.klines)*160+2), a.klines)
		default:
			a.json = exgate.AppendOrderBookJSON(make([]byte, 0, (len(a.book.Bids)+len(a.book.Asks))*48+24), a.book)
		}
	})
	return a.json
}

func klineKey(req exgate.KlineRequest) string {
	return "k|" + req.Symbol.Base + "|" + req.Symbol.Quote + "|" + string(req.Interval) + "|" + strconv.Itoa(req.Limit)
}

func bookKey(req exgate.OrderBookRequest) string {
	return "b|" + req.Symbol.Base + "|" + req.Symbol.Quote + "|" + strconv.Itoa(req.Limit)
}

// RecentKlines shares the call with identical concurrent requests. The
// klines are immutable values shared by every caller.
func (e *Exchange) RecentKlines(ctx context.Context, cred exgate.Credential, req exgate.KlineRequest) ([]exgate.Kline, error) {
	a, err := e.klines(ctx, cred, req)
	if err != nil {
		return nil, err
	}
	return a.klines, nil
}

var _ exgate.KlinesAppender = (*Exchange)(nil)

// AppendRecentKlinesJSON appends RecentKlines' answer encoded as the API
// answers it: identical concurrent requests share one upstream call and
// one encoding (the adapter's own, when it is an exgate.KlinesAppender),
// which each caller copies into its own buffer.
func (e *Exchange) AppendRecentKlinesJSON(ctx context.Context, dst []byte, cred exgate.Credential, req exgate.KlineRequest) ([]byte, error) {
	a, err := e.do(ctx, "j"+klineKey(req), func(ctx context.Context) (*answer, error) {
		b, err := exgate.AppendRecentKlinesJSON(ctx, e.Exchange, nil, cred, req)
		return &answer{json: b}, err
	})
	if err != nil {
		return dst, err
	}
	return append(dst, a.encoded()...), nil
}

func (e *Exchange) klines(ctx context.Context, cred exgate.Credential, req exgate.KlineRequest) (*answer, error) {
	return e.do(ctx, klineKey(req), func(ctx context.Context) (*answer, error) {
		ks, err := e.Exchange.RecentKlines(ctx, cred, req)
		if ks == nil {
			ks = []exgate.Kline{}
		}
		return &answer{klines: ks}, err
	})
}

// OrderBook shares the call with identical concurrent requests.
func (e *Exchange) OrderBook(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) (exgate.OrderBook, error) {
	a, err := e.book(ctx, cred, req)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	return a.book, nil
}

// OrderBookJSON is OrderBook already encoded as the API answers it.
func (e *Exchange) OrderBookJSON(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) ([]byte, error) {
	a, err := e.book(ctx, cred, req)
	if err != nil {
		return nil, err
	}
	return a.encoded(), nil
}

func (e *Exchange) book(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) (*answer, error) {
	return e.do(ctx, bookKey(req), func(ctx context.Context) (*answer, error) {
		b, err := e.Exchange.OrderBook(ctx, cred, req)
		return &answer{book: b}, err
	})
}

// maxCall bounds a shared call whose starter has no deadline.
const maxCall = 30 * time.Second

// do runs fn once per key among concurrent callers. The shared call is not
// cancelled when the caller that started it goes away (others may still
// wait for it), but it keeps that caller's deadline: the adapter's pacing
// refuses a wait that does not fit before it (503 EXCHANGE_UNAVAILABLE
// with Retry-After, shared by every caller) instead of holding the call
// past the deadline, when the callers could only be told 504. Each caller
// stops waiting at its own deadline.
func (e *Exchange) do(ctx context.Context, key string, fn func(context.Context) (*answer, error)) (*answer, error) {
	if e.maxAge > 0 {
		if a, ok := e.cache.get(key, e.now()); ok {
			e.noteHit(key)
			return a, nil
		}
	}
	ran := false // set by the call, if it is this caller's
	ch := e.group.DoChan(key, func() (any, error) {
		ran = true
		deadline, ok := ctx.Deadline()
		if !ok {
			deadline = time.Now().Add(maxCall)
		}
		callCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
		a, err := fn(callCtx)
		if err != nil {
			return nil, err
		}
		if e.maxAge > 0 {
			e.cache.put(key, a, e.now().Add(e.maxAge))
		}
		return a, nil
	})
	select {
	case r := <-ch:
		if !ran {
			e.noteHit(key)
		}
		return result(r)
	case <-ctx.Done():
		select {
		case r := <-ch: // the shared call ended at the same deadline
			return result(r)
		default:
		}
		return nil, exgate.Errorf(exgate.CodeExchangeTimeout, "no market data from the exchange before the request's deadline")
	}
}

// noteHit reports a request answered by another's call.
func (e *Exchange) noteHit(key string) {
	if e.hit == nil {
		return
	}
	kind := "klines"
	if key[0] == 'b' {
		kind = "book"
	}
	e.hit(kind)
}

func result(r singleflight.Result) (*answer, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	return r.Val.(*answer), nil
}
