package kraken

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// ohlcRow is one row of Kraken's OHLC answer: [time, open, high, low,
// close, vwap, volume, count].
type ohlcRow struct {
	open                   time.Time
	o, h, l, c, volume     string
	high, low, volumeValue decimal.Decimal
	count                  uint64
}

// parseOHLC parses an OHLC result: {"<PAIRID>": [rows...], "last": n}. The
// rows are returned oldest first.
func parseOHLC(raw []byte, pairKey string) ([]ohlcRow, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	data, ok := res[pairKey]
	if !ok {
		for k, v := range res {
			if k != "last" {
				data, ok = v, true
				break
			}
		}
	}
	if !ok {
		return nil, fmt.Errorf("no OHLC rows in the answer")
	}
	var rows [][]json.RawMessage
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, err
	}
	out := make([]ohlcRow, 0, len(rows))
	for _, r := range rows {
		if len(r) < 8 {
			return nil, fmt.Errorf("OHLC row has %d fields, want 8", len(r))
		}
		var ts int64
		if err := json.Unmarshal(r[0], &ts); err != nil {
			return nil, fmt.Errorf("OHLC time: %w", err)
		}
		var row ohlcRow
		row.open = time.Unix(ts, 0).UTC()
		var err error
		if _, row.o, err = plainDecimal(r[1]); err != nil {
			return nil, err
		}
		if row.high, row.h, err = plainDecimal(r[2]); err != nil {
			return nil, err
		}
		if row.low, row.l, err = plainDecimal(r[3]); err != nil {
			return nil, err
		}
		if _, row.c, err = plainDecimal(r[4]); err != nil {
			return nil, err
		}
		if row.volumeValue, row.volume, err = plainDecimal(r[6]); err != nil {
			return nil, err
		}
		var count json.Number
		if err := json.Unmarshal(r[7], &count); err != nil {
			return nil, fmt.Errorf("OHLC count: %w", err)
		}
		n, err := strconv.ParseUint(count.String(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("OHLC count %q: %w", count, err)
		}
		row.count = n
		out = append(out, row)
	}
	slices.SortStableFunc(out, func(a, b ohlcRow) int { return a.open.Compare(b.open) })
	return out, nil
}

// RecentKlines returns the most recent req.Limit klines. Kraken's OHLC
// answer holds at most 720 rows, so the answer is truncated to what those
// rows give: 720 klines for Kraken's own intervals, fewer for the built
// ones (docs/exchanges/kraken.md lists each cap). Built intervals come from
// the largest finer Kraken interval that divides them, aligned to UTC; the
// oldest bucket is dropped when the rows start inside it.
func (e *Exchange) RecentKlines(ctx context.Context, cred exgate.Credential, req exgate.KlineRequest) ([]exgate.Kline, error) {
	src, ok := krakenIntervals[req.Interval]
	if !ok {
		return nil, exgate.ParamError("interval", "unknown interval %q", req.Interval)
	}
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return nil, err
	}
	mk, err := m.market(req.Symbol)
	if err != nil {
		return nil, err
	}
	limit := rest.Limit(req.Limit, exgate.DefaultKlineLimit, exgate.MaxKlineLimit)
	rows, err := e.fetchOHLC(ctx, mk, src.minutes)
	if err != nil {
		return nil, err
	}
	var klines []exgate.Kline
	switch {
	case src.native && req.Interval == exgate.Interval1w && !alignedTo(rows, exgate.Interval1w):
		// Kraken's weeks do not start on Monday 00:00 UTC: build the
		// weeks from days.
		days, err := e.fetchOHLC(ctx, mk, 1440)
		if err != nil {
			return nil, err
		}
		klines = aggregate(days, exgate.Interval1w)
	case src.native:
		klines = make([]exgate.Kline, 0, len(rows))
		for _, r := range rows {
			klines = append(klines, rowKline(r, req.Interval))
		}
	default:
		klines = aggregate(rows, req.Interval)
	}
	if len(klines) > limit {
		klines = klines[len(klines)-limit:]
	}
	return klines, nil
}

// fetchOHLC reads the (at most 720) most recent rows of an interval.
func (e *Exchange) fetchOHLC(ctx context.Context, mk *market, minutes int) ([]ohlcRow, error) {
	var raw json.RawMessage
	q := url.Values{"pair": {mk.key}, "interval": {strconv.Itoa(minutes)}}
	if err := e.c.public(ctx, "OHLC", q, &raw); err != nil {
		return nil, err
	}
	rows, err := parseOHLC(raw, mk.key)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "unparseable Kraken OHLC answer", Err: err}
	}
	return rows, nil
}

// alignedTo reports whether every row opens at the start of an iv bucket.
func alignedTo(rows []ohlcRow, iv exgate.Interval) bool {
	for _, r := range rows {
		if !iv.Start(r.open).Equal(r.open) {
			return false
		}
	}
	return true
}

// rowKline converts one Kraken row of interval iv.
func rowKline(r ohlcRow, iv exgate.Interval) exgate.Kline {
	n := r.count
	return exgate.Kline{
		OpenTime:       r.open.UnixMilli(),
		OpenPrice:      r.o,
		HighPrice:      r.h,
		LowPrice:       r.l,
		ClosePrice:     r.c,
		Volume:         r.volume,
		CloseTime:      iv.Next(r.open).UnixMilli() - 1,
		NumberOfTrades: &n,
	}
}

// aggregate builds iv klines from finer rows (oldest first): open of the
// first row, close of the last, highest high, lowest low, summed volume and
// trade count. A bucket is dropped when the rows start after its start
// (only the oldest one can be incomplete that way).
func aggregate(rows []ohlcRow, iv exgate.Interval) []exgate.Kline {
	var out []exgate.Kline
	for i := 0; i < len(rows); {
		start := iv.Start(rows[i].open)
		next := iv.Next(start)
		j := i
		agg := rows[i]
		count := uint64(0)
		volume := decimal.Zero
		for ; j < len(rows) && rows[j].open.Before(next); j++ {
			r := rows[j]
			if r.high.GreaterThan(agg.high) {
				agg.high, agg.h = r.high, r.h
			}
			if r.low.LessThan(agg.low) {
				agg.low, agg.l = r.low, r.l
			}
			agg.c = r.c
			volume = volume.Add(r.volumeValue)
			count += r.count
		}
		complete := rows[i].open.Equal(start)
		i = j
		if !complete {
			continue
		}
		n := count
		out = append(out, exgate.Kline{
			OpenTime:       start.UnixMilli(),
			OpenPrice:      agg.o,
			HighPrice:      agg.h,
			LowPrice:       agg.l,
			ClosePrice:     agg.c,
			Volume:         volume.String(),
			CloseTime:      next.UnixMilli() - 1,
			NumberOfTrades: &n,
		})
	}
	return out
}

// bookLevel is one parsed order book level, with Kraken's text kept.
type bookLevel struct {
	price, qty         decimal.Decimal
	priceText, qtyText string
}

// book is a parsed Depth answer, bids descending and asks ascending.
type book struct{ bids, asks []bookLevel }

// fetchBook reads count levels per side of mk.
func (e *Exchange) fetchBook(ctx context.Context, mk *market, count int) (book, error) {
	var res map[string]json.RawMessage
	q := url.Values{"pair": {mk.key}, "count": {fmt.Sprint(count)}}
	if err := e.c.public(ctx, "Depth", q, &res); err != nil {
		return book{}, err
	}
	raw, ok := res[mk.key]
	if !ok {
		for _, v := range res {
			raw = v
			break
		}
	}
	bk, err := parseDepth(raw)
	if err != nil {
		return book{}, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "unparseable Kraken order book", Err: err}
	}
	return bk, nil
}

// parseDepth parses one pair's {"asks":[[price,volume,ts]...],"bids":...}.
func parseDepth(raw []byte) (book, error) {
	var side struct {
		Asks [][]json.RawMessage `json:"asks"`
		Bids [][]json.RawMessage `json:"bids"`
	}
	if err := json.Unmarshal(raw, &side); err != nil {
		return book{}, err
	}
	conv := func(rows [][]json.RawMessage) ([]bookLevel, error) {
		out := make([]bookLevel, 0, len(rows))
		for _, r := range rows {
			if len(r) < 2 {
				return nil, fmt.Errorf("book level has %d fields", len(r))
			}
			p, pt, err := plainDecimal(r[0])
			if err != nil {
				return nil, err
			}
			v, vt, err := plainDecimal(r[1])
			if err != nil {
				return nil, err
			}
			out = append(out, bookLevel{price: p, qty: v, priceText: pt, qtyText: vt})
		}
		return out, nil
	}
	var bk book
	var err error
	if bk.asks, err = conv(side.Asks); err != nil {
		return book{}, err
	}
	if bk.bids, err = conv(side.Bids); err != nil {
		return book{}, err
	}
	slices.SortStableFunc(bk.asks, func(a, b bookLevel) int { return a.price.Cmp(b.price) })
	slices.SortStableFunc(bk.bids, func(a, b bookLevel) int { return b.price.Cmp(a.price) })
	return bk, nil
}

// plainDecimal parses a JSON string (or number) holding a non-negative
// decimal and returns it with its plain-notation text: Kraken's own text
// when it is plain, else the decimal rewritten without exponent.
func plainDecimal(raw json.RawMessage) (decimal.Decimal, string, error) {
	s := string(raw)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	d, err := exgate.ParseDecimal(s)
	if err != nil {
		return decimal.Decimal{}, "", fmt.Errorf("kraken: decimal %q: %w", s, err)
	}
	if d.Sign() < 0 {
		return decimal.Decimal{}, "", fmt.Errorf("kraken: negative decimal %q", s)
	}
	if exgate.IsPlainDecimal(s) {
		return d, s, nil
	}
	if text := d.String(); exgate.IsPlainDecimal(text) {
		return d, text, nil
	}
	return decimal.Decimal{}, "", fmt.Errorf("kraken: decimal %q has no plain form of at most 64 characters", s)
}

// OrderBook returns at most req.Limit levels per side; Kraken serves at
// most 500, so a larger limit gets 500.
func (e *Exchange) OrderBook(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) (exgate.OrderBook, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	mk, err := m.market(req.Symbol)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	limit := rest.Limit(req.Limit, exgate.DefaultOrderBookLimit, exgate.MaxOrderBookLimit)
	count := min(limit, maxDepthCount)
	bk, err := e.fetchBook(ctx, mk, count)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	levels := func(ls []bookLevel) []exgate.Level {
		out := make([]exgate.Level, 0, min(len(ls), limit))
		for _, l := range ls[:min(len(ls), limit)] {
			out = append(out, exgate.Level{Price: l.priceText, Quantity: l.qtyText})
		}
		return out
	}
	return exgate.OrderBook{Bids: levels(bk.bids), Asks: levels(bk.asks)}, nil
}
