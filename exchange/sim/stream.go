package sim

import (
	"context"
	"sync"
	"time"

	"github.com/exgate/exgate"
)

// The simulated exchange streams natively (docs/contract.md 2.5): its
// market data is a function of the second, so the book and the current
// kline are read again each second and emitted when they changed; an order
// is emitted when the gateway places or cancels it here (an in-process
// notice) and when the scan of the credential's open orders, once a
// second, finds it changed (fills on the price path, orders placed by
// another instance sharing the store).

var _ exgate.Streamer = (*Exchange)(nil)

// streamPeriod is how often the streams look at the market and the open
// orders: the simulated book changes each second.
const streamPeriod = time.Second

// ticker returns the stream clock's ticks and its stop function.
func (e *Exchange) ticker() (<-chan time.Time, func()) {
	if e.tick != nil {
		return e.tick(streamPeriod)
	}
	t := time.NewTicker(streamPeriod)
	return t.C, t.Stop
}

// eachTick calls f now and at every tick of the stream period until ctx
// ends.
func (e *Exchange) eachTick(ctx context.Context, f func()) error {
	ticks, stop := e.ticker()
	defer stop()
	f()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
			f()
		}
	}
}

// notices holds the channels of the WatchOrders calls of each credential.
type notices struct {
	mu   sync.Mutex
	subs map[int64]map[chan exgate.Order]struct{}
}

func (n *notices) add(id int64) chan exgate.Order {
	ch := make(chan exgate.Order, 64)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.subs == nil {
		n.subs = map[int64]map[chan exgate.Order]struct{}{}
	}
	if n.subs[id] == nil {
		n.subs[id] = map[chan exgate.Order]struct{}{}
	}
	n.subs[id][ch] = struct{}{}
	return ch
}

func (n *notices) remove(id int64, ch chan exgate.Order) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.subs[id], ch)
	if len(n.subs[id]) == 0 {
		delete(n.subs, id)
	}
}

// notify tells the credential's watchers of o. A watcher whose channel is
// full misses the notice; its next scan finds the change.
func (n *notices) notify(id int64, o exgate.Order) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ch := range n.subs[id] {
		select {
		case ch <- o:
		default:
		}
	}
}

// WatchOrders emits the open orders, then every change of the
// credential's orders.
func (e *Exchange) WatchOrders(ctx context.Context, cred exgate.Credential, emit func(exgate.Order)) error {
	ch := e.notices.add(cred.ID)
	defer e.notices.remove(cred.ID, ch)
	ticks, stop := e.ticker()
	defer stop()
	// last holds the last state emitted of each open order, final the
	// orders emitted final (a cancel is both noticed and found by the
	// scan).
	last := map[string]exgate.Order{}
	final := map[string]bool{}
	seen := func(o exgate.Order) {
		if prev, ok := last[o.ClientOrderID]; (ok && !prev.Advances(o)) || final[o.ClientOrderID] {
			return
		}
		if o.Status.Final() {
			delete(last, o.ClientOrderID)
			if len(final) >= 10_000 {
				clear(final)
			}
			final[o.ClientOrderID] = true
		} else {
			last[o.ClientOrderID] = o
		}
		emit(o)
	}
	scan := func() error {
		open, err := e.OpenOrders(ctx, cred, exgate.OrderFilter{})
		if err != nil {
			return err
		}
		still := make(map[string]bool, len(open))
		for i := len(open) - 1; i >= 0; i-- { // oldest first
			still[open[i].ClientOrderID] = true
			seen(open[i])
		}
		for cid := range last {
			if still[cid] {
				continue
			}
			o, err := e.QueryOrder(ctx, cred, exgate.OrderQuery{ClientOrderID: cid})
			if err != nil {
				continue // read again next second
			}
			seen(o)
		}
		return nil
	}
	if err := scan(); err != nil && ctx.Err() == nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case o := <-ch:
			seen(o)
		case <-ticks:
			if err := scan(); err != nil && ctx.Err() == nil {
				return err
			}
		}
	}
}

// WatchBook emits the book of sym, MaxStreamDepth levels a side, each
// second it changes.
func (e *Exchange) WatchBook(ctx context.Context, cred exgate.Credential, sym exgate.Symbol, emit func(exgate.OrderBook)) error {
	p, err := e.market(sym)
	if err != nil {
		return err
	}
	lastSec := int64(-1 << 62)
	send := func() {
		sec := floorDiv(e.now().UnixMilli(), 1000)
		if sec == lastSec {
			return
		}
		lastSec = sec
		bids, asks := e.book(p, sec)
		emit(exgate.OrderBook{Bids: bids.levels(exgate.MaxStreamDepth), Asks: asks.levels(exgate.MaxStreamDepth)})
	}
	return e.eachTick(ctx, send)
}

// WatchKlines emits the current kline of sym and iv each second it
// changes and, once, each kline as it closes.
func (e *Exchange) WatchKlines(ctx context.Context, cred exgate.Credential, sym exgate.Symbol, iv exgate.Interval, emit func(exgate.KlineUpdate)) error {
	p, err := e.market(sym)
	if err != nil {
		return err
	}
	if _, err := exgate.ParseInterval(string(iv)); err != nil {
		return exgate.ParamError("interval", "%v", err)
	}
	ivKey := hashString("interval/" + string(iv))
	var last exgate.Kline
	var started bool
	send := func() {
		now := e.now()
		start := iv.Start(now)
		if started && last.OpenTime != start.UnixMilli() {
			// The kline of last closed since: once, as it ended.
			closed := e.kline(p, iv, ivKey, time.UnixMilli(last.OpenTime).UTC(), now)
			emit(exgate.KlineUpdate{Kline: closed, Closed: true})
		}
		k := e.kline(p, iv, ivKey, start, now)
		if started && klineEqual(k, last) {
			return
		}
		last, started = k, true
		emit(exgate.KlineUpdate{Kline: k})
	}
	return e.eachTick(ctx, send)
}

func klineEqual(a, b exgate.Kline) bool {
	if (a.NumberOfTrades == nil) != (b.NumberOfTrades == nil) || (a.NumberOfTrades != nil && *a.NumberOfTrades != *b.NumberOfTrades) {
		return false
	}
	a.NumberOfTrades, b.NumberOfTrades = nil, nil
	return a == b
}
