package okx

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// maxBuiltSource caps the source bars read to build a kline interval OKX
// has no bar for (3000 bars: five pages of GET /market/candles and the
// rest from history-candles); docs/exchanges/okx.md states what it means
// for 3d, 8h and the fallbacks of 1w and 1M.
const maxBuiltSource = 3000

// RecentKlines returns the last req.Limit klines of the pair, ascending,
// the last one possibly still open. Intervals OKX has a UTC bar for are
// read with GET /market/candles (newest first, at most 300 a page, the
// latest 1,440 bars) and, further back, /market/history-candles (100 a
// page); the others are built from a finer interval aligned to UTC
// (klinePlans). numberOfTrades is always null: OKX does not report it.
func (e *Exchange) RecentKlines(ctx context.Context, cred exgate.Credential, req exgate.KlineRequest) ([]exgate.Kline, error) {
	plan, ok := klinePlans[req.Interval]
	if !ok {
		return nil, exgate.ParamError("interval", "unknown interval %q", req.Interval)
	}
	limit := rest.Limit(req.Limit, exgate.DefaultKlineLimit, exgate.MaxKlineLimit)
	p, err := e.markets.Lookup(ctx, req.Symbol)
	if err != nil {
		return nil, err
	}
	if plan.native.name != "" {
		cs, err := e.fetchCandles(ctx, p, plan.native.name, limit, time.Time{})
		if err != nil {
			return nil, err
		}
		ks, aligned := nativeKlines(req.Interval, cs)
		if aligned || plan.source == "" {
			if !aligned {
				return nil, badAnswer(epCandles, fmt.Errorf("%s bars of %s are not aligned to UTC %s buckets", plan.native.name, p.id, req.Interval))
			}
			return ks[max(len(ks)-limit, 0):], nil
		}
		e.log.WarnContext(ctx, "okx bars not aligned to UTC; building them from a finer interval",
			"interval", req.Interval, "bar", plan.native.name, "source", plan.source)
	}
	return e.builtKlines(ctx, p, req.Interval, plan.source, limit)
}

// nativeKlines turns ascending candles into klines of iv; aligned is false
// when a bar does not start where a UTC bucket of iv starts.
func nativeKlines(iv exgate.Interval, cs []candle) ([]exgate.Kline, bool) {
	out := make([]exgate.Kline, 0, len(cs))
	for _, c := range cs {
		open := time.UnixMilli(c.openMS).UTC()
		if !iv.Start(open).Equal(open) {
			return nil, false
		}
		out = append(out, rest.Kline(iv, open, c.open, c.high, c.low, c.close, c.baseVolume))
	}
	return out, true
}

// fetchCandles reads the last want bars of barName, ascending and without
// duplicates: GET /market/candles pages (newest first, each older than the
// last with after=) while OKX serves them, then /market/history-candles.
// It stops early at a bar older than since (when set) or when OKX has no
// more.
func (e *Exchange) fetchCandles(ctx context.Context, p *pair, barName string, want int, since time.Time) ([]candle, error) {
	var all []candle
	after := ""
	history := false
	for len(all) < want {
		ep, max := epCandles, maxCandles
		if history {
			ep, max = epHistoryCandles, maxHistoryCandles
		}
		n := min(want-len(all), max)
		var ps rest.Params
		ps.Add("instId", p.id)
		ps.Add("bar", barName)
		if after != "" {
			ps.Add("after", after)
		}
		ps.Add("limit", strconv.Itoa(n))
		rows, err := rest.Fetch(ctx, e.c.do, request{ep: ep, params: ps}, parseCandles)
		if err != nil {
			return nil, err
		}
		oldest := int64(-1)
		for _, c := range rows {
			if oldest < 0 || c.openMS < oldest {
				oldest = c.openMS
			}
		}
		all = append(all, rows...)
		reachedSince := !since.IsZero() && oldest >= 0 && oldest <= since.UnixMilli()
		switch {
		case reachedSince:
			want = len(all)
		case len(rows) < n && history:
			want = len(all) // nothing older
		case len(rows) < n:
			history = true // past the latest 1,440 bars
		}
		if oldest >= 0 {
			after = strconv.FormatInt(oldest, 10)
		}
	}
	slices.SortFunc(all, func(a, b candle) int { return cmp.Compare(a.openMS, b.openMS) })
	all = slices.CompactFunc(all, func(a, b candle) bool { return a.openMS == b.openMS })
	if !since.IsZero() {
		i, _ := slices.BinarySearchFunc(all, since.UnixMilli(), func(c candle, ms int64) int { return cmp.Compare(c.openMS, ms) })
		all = all[i:]
	}
	return all, nil
}

// builtKlines builds the last limit klines of iv from source bars read
// from the start of the oldest iv bucket wanted (UTC aligned), so that
// every bucket but the current one is complete; at most maxBuiltSource
// source bars are read, which caps how far back a built interval reaches.
func (e *Exchange) builtKlines(ctx context.Context, p *pair, iv, source exgate.Interval, limit int) ([]exgate.Kline, error) {
	sp, ok := klinePlans[source]
	if !ok || sp.native.name == "" || sp.native.d == 0 {
		return nil, fmt.Errorf("okx: no native source interval for %s", iv)
	}
	now := e.c.serverNow().UTC()
	first := iv.Start(now)
	for n := 1; n < limit; n++ {
		first = iv.Previous(first)
	}
	want := int(source.Start(now).Sub(first)/sp.native.d) + 1
	want = min(want, maxBuiltSource)
	cs, err := e.fetchCandles(ctx, p, sp.native.name, want, first)
	if err != nil {
		return nil, err
	}
	out, err := aggregate(iv, source, cs)
	if err != nil {
		return nil, badAnswer(epCandles, err)
	}
	return out[max(len(out)-limit, 0):], nil
}

// aggregate builds iv klines from ascending source candles
// (rest.Aggregate).
func aggregate(iv, source exgate.Interval, cs []candle) ([]exgate.Kline, error) {
	bars := make([]rest.Candle, len(cs))
	for i, c := range cs {
		bars[i] = rest.Candle{Open: time.UnixMilli(c.openMS), OpenPrice: c.open, High: c.high, Low: c.low, Close: c.close, Volume: c.baseVolume}
	}
	return rest.Aggregate(iv, source, bars)
}

// OrderBook returns at most req.Limit levels per side from
// GET /market/books (OKX serves at most 400).
func (e *Exchange) OrderBook(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) (exgate.OrderBook, error) {
	limit := min(rest.Limit(req.Limit, exgate.DefaultOrderBookLimit, exgate.MaxOrderBookLimit), maxBookDepth)
	p, err := e.markets.Lookup(ctx, req.Symbol)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	bids, asks, err := e.book(ctx, p, limit)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	return exgate.OrderBook{Bids: levels(bids, limit), Asks: levels(asks, limit)}, nil
}

// book reads depth levels of the pair's book.
func (e *Exchange) book(ctx context.Context, p *pair, depth int) (bids, asks []level, err error) {
	var ps rest.Params
	ps.Add("instId", p.id)
	ps.Add("sz", strconv.Itoa(depth))
	body, err := e.c.do(ctx, request{ep: epBooks, params: ps})
	if err != nil {
		return nil, nil, err
	}
	if bids, asks, err = parseBook(body); err != nil {
		return nil, nil, badAnswer(epBooks, err)
	}
	return bids, asks, nil
}

func levels(ls []level, limit int) []exgate.Level {
	out := make([]exgate.Level, 0, min(len(ls), limit))
	for _, l := range ls[:min(len(ls), limit)] {
		out = append(out, exgate.Level{Price: l.price, Quantity: l.qty})
	}
	return out
}
