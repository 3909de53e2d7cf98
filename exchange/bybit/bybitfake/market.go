package bybitfake

import (
	"hash/fnv"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// Pair is one spot instrument of the fake, in the fields of
// GET /v5/market/instruments-info.
type Pair struct {
	Symbol, Base, Quote string
	// BasePrecision, QuotePrecision and TickSize are the steps of base
	// quantities, quote amounts and prices; MinOrderAmt the smallest
	// order value in quote; MaxLimitOrderQty and MaxMarketOrderQty the
	// largest base quantities.
	BasePrecision, QuotePrecision, TickSize decimal.Decimal
	MinOrderAmt                             decimal.Decimal
	MaxLimitOrderQty, MaxMarketOrderQty     decimal.Decimal
	Status                                  string
	// Mid is the book's middle price; Unit the quantity of the first
	// level.
	Mid, Unit decimal.Decimal
}

func newPair(symbol, base, quote, basePrec, quotePrec, tick, minAmt, maxQty, mid, unit string) *Pair {
	d := decimal.RequireFromString
	return &Pair{Symbol: symbol, Base: base, Quote: quote, BasePrecision: d(basePrec), QuotePrecision: d(quotePrec), TickSize: d(tick),
		MinOrderAmt: d(minAmt), MaxLimitOrderQty: d(maxQty), MaxMarketOrderQty: d(maxQty).Div(decimal.NewFromInt(2)), Status: "Trading",
		Mid: d(mid), Unit: d(unit)}
}

// defaultPairs are the fake's instruments: BTCUSDT as in Bybit's doc
// example (basePrecision 0.000001, quotePrecision 0.00000001, tickSize
// 0.1, minOrderAmt 5), and pairs quoted in USDT and in BTC (ETHBTC, the
// inverted example's pair).
func defaultPairs() []*Pair {
	return []*Pair{
		newPair("BTCUSDT", "BTC", "USDT", "0.000001", "0.00000001", "0.1", "5", "200", "60000", "0.05"),
		newPair("ETHUSDT", "ETH", "USDT", "0.00001", "0.0000001", "0.01", "5", "4000", "3000", "0.5"),
		newPair("ETHBTC", "ETH", "BTC", "0.0001", "0.00000001", "0.00001", "0.0001", "4000", "0.05", "0.5"),
		newPair("SOLUSDT", "SOL", "USDT", "0.001", "0.000001", "0.01", "5", "80000", "150", "5"),
		newPair("XRPUSDT", "XRP", "USDT", "0.01", "0.0001", "0.0001", "5", "2000000", "0.5", "500"),
	}
}

// bookDepth is the levels per side of a generated book.
const bookDepth = 200

// lvl is one level of the fake's book.
type lvl struct{ price, qty decimal.Decimal }

// book is a pair's order book: bids descending, asks ascending; u is
// Bybit's update id and seq its cross sequence.
type book struct {
	bids, asks []lvl
	u, seq     int64
}

// generateBook builds a deterministic book around the pair's mid price:
// levels 10 ticks apart starting 5 ticks from the mid, quantities rising.
func generateBook(p *Pair) *book {
	b := &book{u: 1, seq: 1000}
	for i := range bookDepth {
		off := p.TickSize.Mul(decimal.NewFromInt(int64(5 + 10*i)))
		qty := p.Unit.Mul(decimal.NewFromInt(int64(1 + 3*(i%5))))
		b.asks = append(b.asks, lvl{p.Mid.Add(off), qty})
		b.bids = append(b.bids, lvl{p.Mid.Sub(off), qty})
	}
	return b
}

// SetBook replaces the book of a symbol (bids and asks best first, as
// [price, qty] decimal strings) and pushes a snapshot to its stream
// subscribers.
func (s *Server) SetBook(symbol string, bids, asks [][2]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	conv := func(ls [][2]string) []lvl {
		out := make([]lvl, 0, len(ls))
		for _, l := range ls {
			out = append(out, lvl{decimal.RequireFromString(l[0]), decimal.RequireFromString(l[1])})
		}
		return out
	}
	old := s.books[symbol]
	b := &book{bids: conv(bids), asks: conv(asks), u: 1, seq: 1000}
	if old != nil {
		b.u, b.seq = old.u+1, old.seq+1
	}
	s.books[symbol] = b
	s.pushBookSnapshotLocked(symbol)
}

// SetStatus changes an instrument's status.
func (s *Server) SetStatus(symbol, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pairs[symbol]; p != nil {
		cp := *p
		cp.Status = status
		s.pairs[symbol] = &cp
	}
}

func (s *Server) handleInstruments(c *call) (any, *apiError) {
	if c.query.Get("category") != "spot" {
		return nil, errorf(10001, "params error: category must be spot in this fake")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	list := []map[string]any{}
	for _, p := range defaultPairsOrder(s.pairs) {
		if sym := c.query.Get("symbol"); sym != "" && sym != p.Symbol {
			continue
		}
		list = append(list, map[string]any{
			"symbol": p.Symbol, "baseCoin": p.Base, "quoteCoin": p.Quote, "innovation": "0", "status": p.Status,
			"marginTrading": "utaOnly", "stTag": "0", "symbolType": "",
			"lotSizeFilter": map[string]string{
				"basePrecision": p.BasePrecision.String(), "quotePrecision": p.QuotePrecision.String(),
				"minOrderQty": p.BasePrecision.String(), "maxOrderQty": p.MaxLimitOrderQty.String(),
				"minOrderAmt": p.MinOrderAmt.String(), "maxOrderAmt": "8000000",
				"maxLimitOrderQty": p.MaxLimitOrderQty.String(), "maxMarketOrderQty": p.MaxMarketOrderQty.String(),
				"postOnlyMaxLimitOrderSize": p.MaxLimitOrderQty.Mul(decimal.NewFromInt(5)).String(),
			},
			"priceFilter":    map[string]string{"tickSize": p.TickSize.String()},
			"riskParameters": map[string]string{"priceLimitRatioX": "0.01", "priceLimitRatioY": "0.02"},
		})
	}
	return map[string]any{"category": "spot", "list": list, "nextPageCursor": ""}, nil
}

// defaultPairsOrder lists the pairs in a fixed order (by symbol).
func defaultPairsOrder(m map[string]*Pair) []*Pair {
	out := make([]*Pair, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j-1].Symbol > out[j].Symbol; j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

// pair finds a spot pair by symbol; an unknown one is Bybit's 10001 "Not
// supported symbols".
func (s *Server) pair(symbol string) (*Pair, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pairs[symbol]; p != nil {
		return p, nil
	}
	return nil, errorf(10001, "Not supported symbols")
}

// intervals are Bybit's kline intervals and their lengths (0: month).
// Source: https://bybit-exchange.github.io/docs/v5/enum#interval.
var intervals = map[string]time.Duration{
	"1": time.Minute, "3": 3 * time.Minute, "5": 5 * time.Minute, "15": 15 * time.Minute, "30": 30 * time.Minute,
	"60": time.Hour, "120": 2 * time.Hour, "240": 4 * time.Hour, "360": 6 * time.Hour, "720": 12 * time.Hour,
	"D": 24 * time.Hour, "W": 7 * 24 * time.Hour, "M": 0,
}

// candleStart is the start of the candle of interval iv containing t:
// multiples of the length since the epoch, weeks on Monday 00:00 UTC,
// months on the first.
func candleStart(iv string, t time.Time) time.Time {
	t = t.UTC()
	switch iv {
	case "M":
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	case "W":
		day := t.Truncate(24 * time.Hour)
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	}
	d := intervals[iv]
	return time.UnixMilli(t.UnixMilli() - t.UnixMilli()%d.Milliseconds()).UTC()
}

// nextStart is the start of the candle after the one starting at t.
func nextStart(iv string, t time.Time) time.Time {
	switch iv {
	case "M":
		return t.AddDate(0, 1, 0)
	case "W":
		return t.AddDate(0, 0, 7)
	}
	return t.Add(intervals[iv])
}

func prevStart(iv string, t time.Time) time.Time {
	switch iv {
	case "M":
		return t.AddDate(0, -1, 0)
	case "W":
		return t.AddDate(0, 0, -7)
	}
	return t.Add(-intervals[iv])
}

// priceAt is the fake's price of a pair at a minute: a deterministic walk
// within 2% of the mid.
func priceAt(p *Pair, t time.Time) decimal.Decimal {
	h := fnv.New64a()
	h.Write([]byte(p.Symbol + strconv.FormatInt(t.Unix()/60, 10)))
	frac := decimal.NewFromInt(int64(h.Sum64()%2001) - 1000).Div(decimal.NewFromInt(50000)) // [-0.02, 0.02]
	return p.Mid.Add(p.Mid.Mul(frac)).Div(p.TickSize).Floor().Mul(p.TickSize)
}

// candleRow is one kline row: [start, open, high, low, close, volume,
// turnover].
func candleRow(p *Pair, iv string, start time.Time) []string {
	end := nextStart(iv, start).Add(-time.Minute)
	o, c := priceAt(p, start), priceAt(p, end)
	h, l := decimal.Max(o, c).Add(p.TickSize), decimal.Min(o, c).Sub(p.TickSize)
	vol := p.Unit.Mul(decimal.NewFromInt(int64(1 + start.Unix()/60%7)))
	return []string{ms(start), o.String(), h.String(), l.String(), c.String(), vol.String(), vol.Mul(c).String()}
}

// handleKline serves GET /v5/market/kline: rows newest first. With start,
// the first candle is the one containing start and the window runs
// forward (at most limit candles); otherwise the newest limit candles up
// to end (default now).
func (s *Server) handleKline(c *call) (any, *apiError) {
	if c.query.Get("category") != "spot" {
		return nil, errorf(10001, "params error: category must be spot in this fake")
	}
	p, e := s.pair(c.query.Get("symbol"))
	if e != nil {
		return nil, e
	}
	iv := c.query.Get("interval")
	if _, ok := intervals[iv]; !ok {
		return nil, errorf(10001, "params error: interval invalid")
	}
	limit, e := limitParam(c.query, 200, 1000)
	if e != nil {
		return nil, e
	}
	startMS, e := intParam(c.query, "start", 0)
	if e != nil {
		return nil, e
	}
	endMS, e := intParam(c.query, "end", c.now.UnixMilli())
	if e != nil {
		return nil, e
	}
	end := time.UnixMilli(min(endMS, c.now.UnixMilli()))
	var starts []time.Time
	if startMS > 0 {
		for t := candleStart(iv, time.UnixMilli(startMS)); !t.After(end) && len(starts) < limit; t = nextStart(iv, t) {
			starts = append(starts, t)
		}
		// newest first
		for i, j := 0, len(starts)-1; i < j; i, j = i+1, j-1 {
			starts[i], starts[j] = starts[j], starts[i]
		}
	} else {
		for t := candleStart(iv, end); len(starts) < limit; t = prevStart(iv, t) {
			starts = append(starts, t)
		}
	}
	rows := make([][]string, 0, len(starts))
	for _, t := range starts {
		rows = append(rows, candleRow(p, iv, t))
	}
	return map[string]any{"category": "spot", "symbol": p.Symbol, "list": rows}, nil
}

// handleBook serves GET /v5/market/orderbook: limit [1, 1000], default 1.
func (s *Server) handleBook(c *call) (any, *apiError) {
	p, e := s.pair(c.query.Get("symbol"))
	if e != nil {
		return nil, e
	}
	limit, e := limitParam(c.query, 1, 1000)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books[p.Symbol]
	return map[string]any{"s": p.Symbol, "b": rows(b.bids, limit), "a": rows(b.asks, limit), "ts": c.now.UnixMilli(), "u": b.u, "seq": b.seq, "cts": c.now.UnixMilli()}, nil
}

// rows writes at most limit levels as [price, size] strings.
func rows(ls []lvl, limit int) [][]string {
	out := make([][]string, 0, min(len(ls), limit))
	for _, l := range ls[:min(len(ls), limit)] {
		out = append(out, []string{l.price.String(), l.qty.String()})
	}
	return out
}
