package gateio

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// RecentKlines returns the last req.Limit klines of the pair, ascending,
// the last one possibly still open. Intervals Gate serves are read with
// GET /spot/candlesticks?limit=; the others are built from a finer
// interval aligned to UTC (klinePlans). numberOfTrades is always null:
// Gate does not report it.
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
		ks, aligned, err := e.nativeKlines(ctx, p, req.Interval, plan.native, limit)
		if err != nil {
			return nil, err
		}
		if aligned || plan.source == "" {
			return ks, nil
		}
		e.log.WarnContext(ctx, "gateio candlesticks not aligned to UTC; building them from a finer interval",
			"interval", req.Interval, "gateInterval", plan.native.name, "source", plan.source)
	}
	return e.builtKlines(ctx, p, req.Interval, plan.source, limit)
}

// nativeKlines reads the last limit candlesticks of one of Gate's
// intervals. aligned is false when a bucket does not start where the
// normalized interval starts (then, for 1M, the caller builds it instead;
// for the others it is an error).
func (e *Exchange) nativeKlines(ctx context.Context, p *pair, iv exgate.Interval, gi gateInterval, limit int) ([]exgate.Kline, bool, error) {
	var ps rest.Params
	ps.Add("currency_pair", p.id)
	ps.Add("interval", gi.name)
	ps.Add("limit", strconv.Itoa(limit))
	cs, err := e.candles(ctx, ps)
	if err != nil {
		return nil, false, err
	}
	out := make([]exgate.Kline, 0, len(cs))
	for _, c := range cs {
		open := time.Unix(c.openSec, 0).UTC()
		if !iv.Start(open).Equal(open) {
			if klinePlans[iv].source != "" {
				return nil, false, nil
			}
			return nil, false, badAnswer(epCandles, fmt.Errorf("%s candlestick at %s is not aligned to UTC", gi.name, open.Format(time.RFC3339)))
		}
		out = append(out, rest.Kline(iv, open, c.open, c.high, c.low, c.close, c.baseVolume))
	}
	out = ascending(out)
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, true, nil
}

// candles sends one candlestick request.
func (e *Exchange) candles(ctx context.Context, ps rest.Params) ([]candle, error) {
	return rest.Fetch(ctx, e.c.do, request{ep: epCandles, params: ps}, parseCandles)
}

// ascending sorts klines by open time and drops duplicates (Gate sends
// them ascending; this only guards the contract).
func ascending(ks []exgate.Kline) []exgate.Kline {
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j-1].OpenTime > ks[j].OpenTime; j-- {
			ks[j-1], ks[j] = ks[j], ks[j-1]
		}
	}
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
// with from/to ranges of at most maxCandlesPerRequest points each. The
// range starts at the start of the oldest iv bucket wanted (UTC aligned),
// so every bucket but the current one is complete; Gate serves no source
// point older than maxCandlesAgo intervals, which caps how far back a
// built interval reaches (docs/exchanges/gateio.md).
func (e *Exchange) builtKlines(ctx context.Context, p *pair, iv, source exgate.Interval, limit int) ([]exgate.Kline, error) {
	sp, ok := klinePlans[source]
	if !ok || sp.native.name == "" || sp.native.d == 0 {
		return nil, fmt.Errorf("gateio: no native source interval for %s", iv)
	}
	step := sp.native.d
	now := e.c.serverNow().UTC()
	last := iv.Start(now)
	first := last
	oldest := source.Start(now).Add(-time.Duration(maxCandlesAgo-1) * step)
	for n := 1; n < limit; n++ {
		prev := iv.Previous(first)
		if prev.Before(oldest) {
			break
		}
		first = prev
	}
	var cs []candle
	end := source.Start(now)
	for from := first; !from.After(end); {
		to := from.Add(time.Duration(maxCandlesPerRequest-1) * step)
		if to.After(end) {
			to = end
		}
		var ps rest.Params
		ps.Add("currency_pair", p.id)
		ps.Add("interval", sp.native.name)
		ps.Add("from", strconv.FormatInt(from.Unix(), 10))
		ps.Add("to", strconv.FormatInt(to.Unix(), 10))
		chunk, err := e.candles(ctx, ps)
		if err != nil {
			return nil, err
		}
		cs = append(cs, chunk...)
		from = to.Add(step)
	}
	out, err := aggregate(iv, source, cs)
	if err != nil {
		return nil, badAnswer(epCandles, err)
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
		bars[i] = rest.Candle{Open: time.Unix(c.openSec, 0), OpenPrice: c.open, High: c.high, Low: c.low, Close: c.close, Volume: c.baseVolume}
	}
	return rest.Aggregate(iv, source, bars)
}

// OrderBook returns at most req.Limit levels per side from
// GET /spot/order_book (Gate serves at most 1000).
func (e *Exchange) OrderBook(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) (exgate.OrderBook, error) {
	limit := min(rest.Limit(req.Limit, exgate.DefaultOrderBookLimit, exgate.MaxOrderBookLimit), maxBookLimit)
	p, err := e.markets.Lookup(ctx, req.Symbol)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	bids, asks, err := e.book(ctx, cred, p, limit)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	return exgate.OrderBook{Bids: levels(bids, limit), Asks: levels(asks, limit)}, nil
}

// book reads limit levels of the pair's book.
func (e *Exchange) book(ctx context.Context, _ exgate.Credential, p *pair, limit int) (bids, asks []level, err error) {
	var ps rest.Params
	ps.Add("currency_pair", p.id)
	ps.Add("limit", strconv.Itoa(limit))
	body, err := e.c.do(ctx, request{ep: epBook, params: ps})
	if err != nil {
		return nil, nil, err
	}
	if bids, asks, err = parseBook(body); err != nil {
		return nil, nil, badAnswer(epBook, err)
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
