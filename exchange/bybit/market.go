package bybit

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// RecentKlines returns the last req.Limit klines of the pair, ascending,
// the last one possibly still open. Intervals Bybit serves are read with
// GET /v5/market/kline?category=spot&limit= (Bybit answers newest first;
// the adapter turns them ascending); 8h and 3d are built from 4h and 1d
// aligned to UTC (klinePlans). numberOfTrades is always null: Bybit does
// not report it.
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
	if plan.native != "" {
		ks, aligned, err := e.nativeKlines(ctx, p, req.Interval, plan.native, limit)
		if err != nil {
			return nil, err
		}
		if aligned || plan.source == "" {
			return ks, nil
		}
		e.log.WarnContext(ctx, "bybit klines not aligned to UTC; building them from a finer interval",
			"interval", req.Interval, "bybitInterval", plan.native, "source", plan.source)
	}
	return e.builtKlines(ctx, p, req.Interval, plan.source, limit)
}

// nativeKlines reads the last limit klines of one of Bybit's intervals.
// aligned is false when a kline does not start where the normalized
// interval starts (W must start on Monday 00:00 UTC and M on the first of
// the month: then the caller builds them instead).
func (e *Exchange) nativeKlines(ctx context.Context, p *pair, iv exgate.Interval, native string, limit int) ([]exgate.Kline, bool, error) {
	var ps rest.Params
	ps.Add("category", "spot")
	ps.Add("symbol", p.id)
	ps.Add("interval", native)
	ps.Add("limit", strconv.Itoa(min(limit, maxKlinesPerRequest)))
	cs, err := rest.Fetch(ctx, e.c.do, request{ep: epKline, params: ps}, parseKlines)
	if err != nil {
		return nil, false, err
	}
	out, aligned, err := toKlines(iv, native, cs)
	if err != nil || !aligned {
		return nil, false, err
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, true, nil
}

// toKlines turns Bybit's rows (newest first) into ascending klines of iv;
// aligned is false when a row does not start where iv starts and iv can be
// built instead, an error when it cannot.
func toKlines(iv exgate.Interval, native string, cs []candle) ([]exgate.Kline, bool, error) {
	out := make([]exgate.Kline, 0, len(cs))
	for _, c := range cs {
		open := time.UnixMilli(c.start).UTC()
		if !iv.Start(open).Equal(open) {
			if klinePlans[iv].source != "" {
				return nil, false, nil
			}
			return nil, false, badAnswer(epKline, fmt.Errorf("%s kline at %s is not aligned to UTC", native, open.Format(time.RFC3339)))
		}
		out = append(out, rest.Kline(iv, open, c.open, c.high, c.low, c.close, c.volume))
	}
	return ascending(out), true, nil
}

// ascending sorts klines by open time (Bybit sends them newest first) and
// drops duplicates, keeping the later copy.
func ascending(ks []exgate.Kline) []exgate.Kline {
	slices.SortStableFunc(ks, func(a, b exgate.Kline) int {
		switch {
		case a.OpenTime < b.OpenTime:
			return -1
		case a.OpenTime > b.OpenTime:
			return 1
		}
		return 0
	})
	out := ks[:0]
	for i, k := range ks {
		if i > 0 && k.OpenTime == out[len(out)-1].OpenTime {
			out[len(out)-1] = k
			continue
		}
		out = append(out, k)
	}
	return out
}

// builtKlines builds the last limit klines of iv from source klines read
// with start/end ranges of at most maxKlinesPerRequest candles each (so
// that which end Bybit keeps of a longer range never matters). The range
// starts at the oldest iv bucket wanted (UTC aligned), so every bucket but
// the current one is complete.
func (e *Exchange) builtKlines(ctx context.Context, p *pair, iv, source exgate.Interval, limit int) ([]exgate.Kline, error) {
	sp, ok := klinePlans[source]
	if !ok || sp.native == "" || sp.d == 0 {
		return nil, fmt.Errorf("bybit: no native source interval for %s", iv)
	}
	now := e.c.serverNow().UTC()
	last := iv.Start(now)
	first := last
	for n := 1; n < limit; n++ {
		first = iv.Previous(first)
	}
	var cs []candle
	end := source.Start(now)
	for from := first; !from.After(end); {
		to := from.Add(time.Duration(maxKlinesPerRequest-1) * sp.d)
		if to.After(end) {
			to = end
		}
		var ps rest.Params
		ps.Add("category", "spot")
		ps.Add("symbol", p.id)
		ps.Add("interval", sp.native)
		ps.Add("start", strconv.FormatInt(from.UnixMilli(), 10))
		ps.Add("end", strconv.FormatInt(to.UnixMilli(), 10))
		ps.Add("limit", strconv.Itoa(maxKlinesPerRequest))
		chunk, err := rest.Fetch(ctx, e.c.do, request{ep: epKline, params: ps}, parseKlines)
		if err != nil {
			return nil, err
		}
		cs = append(cs, chunk...)
		from = to.Add(sp.d)
	}
	slices.SortFunc(cs, func(a, b candle) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	out, err := aggregate(iv, source, cs)
	if err != nil {
		return nil, badAnswer(epKline, err)
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// aggregate builds iv klines from ascending source candles
// (rest.Aggregate).
func aggregate(iv, source exgate.Interval, cs []candle) ([]exgate.Kline, error) {
	bars := make([]rest.Candle, len(cs))
	for i, c := range cs {
		bars[i] = rest.Candle{Open: time.UnixMilli(c.start), OpenPrice: c.open, High: c.high, Low: c.low, Close: c.close, Volume: c.volume}
	}
	return rest.Aggregate(iv, source, bars)
}

// OrderBook returns at most req.Limit levels per side from
// GET /v5/market/orderbook (spot serves at most 1000).
func (e *Exchange) OrderBook(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) (exgate.OrderBook, error) {
	limit := min(rest.Limit(req.Limit, exgate.DefaultOrderBookLimit, exgate.MaxOrderBookLimit), maxBookLimit)
	p, err := e.markets.Lookup(ctx, req.Symbol)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	bids, asks, err := e.book(ctx, p, limit)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	return exgate.OrderBook{Bids: toLevels(bids, limit), Asks: toLevels(asks, limit)}, nil
}

// book reads limit levels of the pair's book.
func (e *Exchange) book(ctx context.Context, p *pair, limit int) (bids, asks []level, err error) {
	var ps rest.Params
	ps.Add("category", "spot")
	ps.Add("symbol", p.id)
	ps.Add("limit", strconv.Itoa(limit))
	result, err := e.c.do(ctx, request{ep: epBook, params: ps})
	if err != nil {
		return nil, nil, err
	}
	if bids, asks, err = parseBook(result); err != nil {
		return nil, nil, badAnswer(epBook, err)
	}
	return bids, asks, nil
}

func toLevels(ls []level, limit int) []exgate.Level {
	out := make([]exgate.Level, 0, min(len(ls), limit))
	for _, l := range ls[:min(len(ls), limit)] {
		out = append(out, exgate.Level{Price: l.p, Quantity: l.q})
	}
	return out
}
