package binance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// RecentKlines returns the last req.Limit klines with GET /api/v3/klines.
// Binance serves every normalized interval and caps limit at 1000, the
// gateway's own maximum.
func (e *Exchange) RecentKlines(ctx context.Context, cred exgate.Credential, req exgate.KlineRequest) ([]exgate.Kline, error) {
	call, err := e.klineCall(ctx, req)
	if err != nil {
		return nil, err
	}
	body, err := e.c.doText(ctx, call.request)
	if err != nil {
		return nil, err
	}
	ks, err := parseKlines(body, call.iv)
	if err != nil {
		return nil, badAnswer(epKlines, err)
	}
	if len(ks) > call.limit {
		ks = ks[len(ks)-call.limit:]
	}
	return ks, nil
}

// klineCall is the GET /api/v3/klines call that answers a KlineRequest.
type klineCall struct {
	request
	iv    exgate.Interval
	limit int
}

func (e *Exchange) klineCall(ctx context.Context, req exgate.KlineRequest) (klineCall, error) {
	iv := req.Interval
	if iv == "" {
		iv = exgate.Interval1m
	}
	name, ok := klineIntervals[iv]
	if !ok {
		return klineCall{}, exgate.ParamError("interval", "unknown interval %q", req.Interval)
	}
	limit := rest.Limit(req.Limit, exgate.DefaultKlineLimit, exgate.MaxKlineLimit)
	mk, err := e.markets.lookup(ctx, req.Symbol)
	if err != nil {
		return klineCall{}, err
	}
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("interval", name)
	p.Add("limit", strconv.Itoa(limit))
	// A kline row is about 175 bytes of JSON.
	return klineCall{request: request{ep: epKlines, params: p, sizeHint: 180 * limit}, iv: iv, limit: limit}, nil
}

// parseKlines reads GET /api/v3/klines rows: [openTime, open, high, low,
// close, volume, closeTime, quoteVolume, trades, ...]. CloseTime is
// recomputed as OpenTime + interval - 1 ms (Binance's own value is the
// same). The answer is scanned directly; encoding/json reads what the
// scanner does not take (escaped strings).
func parseKlines(body string, iv exgate.Interval) ([]exgate.Kline, error) {
	c := klineConverter{rows: newKlineRows(iv)}
	err := scanKlines(body, c.add)
	if errors.Is(err, errShape) {
		c = klineConverter{rows: c.rows}
		var rows []rawKline
		if rows, err = decodeKlines([]byte(body)); err == nil {
			for i := range rows {
				if err = c.add(len(rows), &rows[i], 0); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if c.out == nil {
		c.out = []exgate.Kline{}
	}
	return c.out, nil
}

// klineRows converts the raw rows of one interval's klines.
type klineRows struct {
	iv   exgate.Interval
	step int64 // milliseconds; 0 for 1M, whose length varies
}

func newKlineRows(iv exgate.Interval) klineRows {
	return klineRows{iv: iv, step: iv.Duration().Milliseconds()}
}

// convert reads row i into k, whose trade count points to trades; prev is
// the open time of the row before it, or -1 for the first.
func (c klineRows) convert(i int, r *rawKline, prev int64, k *exgate.Kline, trades *uint64) error {
	var err error
	if k.OpenTime, err = parseCount(r.open); err != nil {
		return fmt.Errorf("kline %d open time %.40q", i, r.open)
	}
	for j := range r.values {
		if !r.plain[j] {
			v, err := plainDecimal(r.values[j])
			if err != nil {
				return fmt.Errorf("kline %d field %d: %w", i, j+1, err)
			}
			r.values[j] = v
		}
	}
	k.OpenPrice, k.HighPrice, k.LowPrice, k.ClosePrice, k.Volume = r.values[0], r.values[1], r.values[2], r.values[3], r.values[4]
	n, err := parseCount(r.trades)
	if err != nil {
		return fmt.Errorf("kline %d trade count %.40q", i, r.trades)
	}
	*trades = uint64(n)
	k.NumberOfTrades = trades
	if k.OpenTime <= prev {
		return fmt.Errorf("klines not ascending at %d", i)
	}
	if c.step > 0 {
		k.CloseTime = k.OpenTime + c.step - 1
	} else {
		k.CloseTime = c.iv.Next(time.UnixMilli(k.OpenTime).UTC()).UnixMilli() - 1
	}
	return nil
}

// parseCount reads a JSON number that should be a count or a time in
// milliseconds: digits only (no sign, fraction or exponent), so never
// negative, and at most what an int64 holds.
func parseCount(s string) (int64, error) {
	if len(s) == 0 || len(s) > 19 {
		return 0, errNotCount
	}
	var n int64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, errNotCount
		}
		n = n*10 + int64(d)
	}
	if len(s) == 19 { // may have overflowed
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, errNotCount
		}
		return v, nil
	}
	return n, nil
}

var errNotCount = errors.New("not a count")

// klineConverter turns raw kline rows into normalized klines, one at a
// time as they are read.
type klineConverter struct {
	rows klineRows
	out  []exgate.Kline
	// counts holds the trade counts the klines point to: one allocation
	// for many klines rather than one per kline. When it is full a new one
	// is started; the klines keep pointing into the old one.
	counts []uint64
}

// add converts r and appends it; n estimates how many rows there are.
func (c *klineConverter) add(n int, r *rawKline, _ int) error {
	i := len(c.out)
	if c.out == nil {
		c.out = make([]exgate.Kline, 0, n)
	}
	if len(c.counts) == cap(c.counts) {
		c.counts = make([]uint64, 0, max(n-i, 16))
	}
	prev := int64(-1)
	if i > 0 {
		prev = c.out[i-1].OpenTime
	}
	c.counts = c.counts[:len(c.counts)+1]
	var k exgate.Kline
	if err := c.rows.convert(i, r, prev, &k, &c.counts[len(c.counts)-1]); err != nil {
		return err
	}
	c.out = append(c.out, k)
	return nil
}

// decodeKlines reads kline rows with encoding/json.
func decodeKlines(body []byte) ([]rawKline, error) {
	var rows [][]json.RawMessage
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("klines answer: %w", err)
	}
	out := make([]rawKline, 0, len(rows))
	for i, row := range rows {
		if len(row) < 9 {
			return nil, fmt.Errorf("kline %d has %d fields", i, len(row))
		}
		r := rawKline{open: string(row[0]), trades: string(row[8])}
		for j := range r.values {
			if err := json.Unmarshal(row[j+1], &r.values[j]); err != nil {
				return nil, fmt.Errorf("kline %d field %d is not a string: %s", i, j+1, rest.Truncate(row[j+1]))
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// plainDecimal checks a non-negative decimal and returns it in plain
// notation (exponent forms are rewritten).
func plainDecimal(s string) (string, error) {
	if exgate.IsPlainDecimal(s) {
		return s, nil
	}
	d, err := exgate.ParseDecimal(s)
	if err != nil || d.IsNegative() {
		return "", fmt.Errorf("not a non-negative decimal: %q", s)
	}
	return d.String(), nil
}

// OrderBook returns at most req.Limit levels per side with
// GET /api/v3/depth, asking for the next depth Binance lists and trimming.
func (e *Exchange) OrderBook(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) (exgate.OrderBook, error) {
	limit := rest.Limit(req.Limit, exgate.DefaultOrderBookLimit, exgate.MaxOrderBookLimit)
	mk, err := e.markets.lookup(ctx, req.Symbol)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	b, err := e.book(ctx, cred, mk, limit)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	return exgate.OrderBook{Bids: b.bids.levels(limit), Asks: b.asks.levels(limit)}, nil
}

// book reads the order book at the listed depth at or above limit.
func (e *Exchange) book(ctx context.Context, cred exgate.Credential, mk *market, limit int) (*orderBook, error) {
	depth := depthLimit(limit)
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("limit", strconv.Itoa(depth))
	// A level is about 35 bytes of JSON.
	return rest.Fetch(ctx, e.c.doText, request{ep: epDepth, params: p, weight: depthWeight(depth), sizeHint: 64 + 70*depth}, parseBook)
}

// bookSide is one side of a book, best price first, as Binance wrote it.
// Prices and quantities are parsed to decimals only by the walks, which
// read the first few levels.
type bookSide []exgate.Level

func (s bookSide) levels(limit int) []exgate.Level {
	out := []exgate.Level(s)
	if len(out) > limit {
		out = out[:limit]
	}
	if out == nil {
		out = []exgate.Level{}
	}
	return out
}

// level returns level i as decimals.
func (s bookSide) level(i int) (price, amount decimal.Decimal) {
	price, _ = decimal.NewFromString(s[i].Price)
	amount, _ = decimal.NewFromString(s[i].Quantity)
	return price, amount
}

type orderBook struct{ bids, asks bookSide }

// side returns the levels an order of that side takes: asks for BUY, bids
// for SELL.
func (b *orderBook) side(s exgate.Side) bookSide {
	if s == exgate.SideBuy {
		return b.asks
	}
	return b.bids
}

// parseBook reads GET /api/v3/depth; bids must be descending and asks
// ascending, as Binance sends them.
func parseBook(body string) (*orderBook, error) {
	bids, asks, err := scanBook(body)
	if err != nil {
		var raw struct {
			Bids [][2]string `json:"bids"`
			Asks [][2]string `json:"asks"`
		}
		if err := json.Unmarshal([]byte(body), &raw); err != nil {
			return nil, fmt.Errorf("depth answer: %w", err)
		}
		bids, asks = raw.Bids, raw.Asks
	}
	b := &orderBook{}
	if b.bids, err = parseSide(bids, true); err != nil {
		return nil, fmt.Errorf("bids: %w", err)
	}
	if b.asks, err = parseSide(asks, false); err != nil {
		return nil, fmt.Errorf("asks: %w", err)
	}
	return b, nil
}

func parseSide(rows [][2]string, descending bool) (bookSide, error) {
	s := make(bookSide, 0, len(rows))
	for i, r := range rows {
		p, err := plainDecimal(r[0])
		if err != nil {
			return nil, fmt.Errorf("level %d price: %w", i, err)
		}
		q, err := plainDecimal(r[1])
		if err != nil {
			return nil, fmt.Errorf("level %d quantity: %w", i, err)
		}
		if i > 0 {
			c := comparePlain(p, s[i-1].Price)
			if (descending && c >= 0) || (!descending && c <= 0) {
				return nil, fmt.Errorf("levels out of order at %d", i)
			}
		}
		s = append(s, exgate.Level{Price: p, Quantity: q})
	}
	return s, nil
}

// walkBase estimates the quote value of base quantity q taken from the
// side, best price first; past the book's depth the last price is used.
// ok is false on an empty side.
func walkBase(s bookSide, q decimal.Decimal) (value decimal.Decimal, ok bool) {
	if len(s) == 0 {
		return decimal.Zero, false
	}
	left := q
	var price decimal.Decimal
	for i := range s {
		var amount decimal.Decimal
		price, amount = s.level(i)
		take := decimal.Min(left, amount)
		value = value.Add(take.Mul(price))
		left = left.Sub(take)
		if !left.IsPositive() {
			return value, true
		}
	}
	return value.Add(left.Mul(price)), true
}

// walkQuote estimates how much base quote amount v trades against the
// side, best price first; past the book's depth the last price is used.
// ok is false on an empty side.
func walkQuote(s bookSide, v decimal.Decimal) (base decimal.Decimal, ok bool) {
	if len(s) == 0 {
		return decimal.Zero, false
	}
	left := v
	var price decimal.Decimal
	for i := range s {
		var amount decimal.Decimal
		price, amount = s.level(i)
		if !price.IsPositive() {
			continue
		}
		cost := amount.Mul(price)
		if cost.GreaterThanOrEqual(left) {
			return base.Add(left.DivRound(price, 18)), true
		}
		base = base.Add(amount)
		left = left.Sub(cost)
	}
	if !price.IsPositive() {
		return base, true
	}
	return base.Add(left.DivRound(price, 18)), true
}
