package gateiofake

import (
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Pair is one currency pair of the fake, written as GET
// /spot/currency_pairs writes it.
type Pair struct {
	ID              string `json:"id"`
	Base            string `json:"base"`
	BaseName        string `json:"base_name"`
	Quote           string `json:"quote"`
	QuoteName       string `json:"quote_name"`
	Fee             string `json:"fee"`
	MinBaseAmount   string `json:"min_base_amount"`
	MinQuoteAmount  string `json:"min_quote_amount"`
	MaxBaseAmount   string `json:"max_base_amount"`
	MaxQuoteAmount  string `json:"max_quote_amount"`
	AmountPrecision int32  `json:"amount_precision"`
	Precision       int32  `json:"precision"`
	TradeStatus     string `json:"trade_status"`
	SellStart       int64  `json:"sell_start"`
	BuyStart        int64  `json:"buy_start"`
	DelistingTime   int64  `json:"delisting_time"`
	Type            string `json:"type"`
	TradeURL        string `json:"trade_url"`

	// mid is the middle of the book, tick the price step between levels
	// and unit the typical level size.
	mid, tick, unit decimal.Decimal
}

func newPair(id, baseName, quoteName, minBase, minQuote, maxBase, maxQuote string, amountPrec, prec int32, mid, tick, unit string) *Pair {
	base, quote, _ := strings.Cut(id, "_")
	return &Pair{
		ID: id, Base: base, BaseName: baseName, Quote: quote, QuoteName: quoteName, Fee: "0.2",
		MinBaseAmount: minBase, MinQuoteAmount: minQuote, MaxBaseAmount: maxBase, MaxQuoteAmount: maxQuote,
		AmountPrecision: amountPrec, Precision: prec, TradeStatus: "tradable",
		SellStart: 1516378650, BuyStart: 1516378650, Type: "normal",
		TradeURL: "https://www.gate.io/trade/" + id,
		mid:      decimal.RequireFromString(mid), tick: decimal.RequireFromString(tick), unit: decimal.RequireFromString(unit),
	}
}

// defaultPairs are the fake's markets, with realistic precisions and
// minimums.
func defaultPairs() []*Pair {
	return []*Pair{
		newPair("BTC_USDT", "Bitcoin", "Tether", "0.00001", "3", "10000", "10000000", 6, 1, "60000", "0.5", "0.05"),
		newPair("ETH_USDT", "Ethereum", "Tether", "0.0001", "3", "100000", "10000000", 4, 2, "3000", "0.05", "0.8"),
		newPair("ETH_BTC", "Ethereum", "Bitcoin", "0.001", "0.0001", "10000", "1000", 3, 6, "0.05", "0.000005", "0.5"),
		newPair("SOL_USDT", "Solana", "Tether", "0.01", "3", "1000000", "10000000", 2, 2, "150", "0.01", "20"),
		newPair("XRP_USDT", "Ripple", "Tether", "1", "3", "10000000", "10000000", 2, 4, "0.6", "0.0001", "5000"),
		newPair("BNB_USDT", "BNB", "Tether", "0.001", "3", "100000", "10000000", 3, 2, "550", "0.05", "2"),
	}
}

// Level is one price level of a book: price and amount in base, as
// decimal strings.
type Level struct {
	Price  string
	Amount string
}

// book holds both sides, best first, parsed, and the update id of the
// book's last change (GET /spot/order_book?with_id=true, the U/u ids of
// spot.order_book_update).
type book struct {
	bids, asks []bookLevel
	id         int64
	changes    int
}

// firstBookID is the update id of a new book.
const firstBookID = 48776300

type bookLevel struct {
	price, amount decimal.Decimal
}

// bookDepth is how many levels per side a generated book has.
const bookDepth = 300

// generateBook builds a deterministic book around the pair's middle
// price: level i is (i+1) ticks away, with a size from 1 to 5 units.
func generateBook(p *Pair) *book {
	b := &book{id: firstBookID}
	for i := range bookDepth {
		off := p.tick.Mul(decimal.NewFromInt(int64(i + 1)))
		amt := p.unit.Mul(decimal.NewFromInt(int64(1 + (i*7)%5))).RoundDown(p.AmountPrecision)
		b.bids = append(b.bids, bookLevel{price: p.mid.Sub(off).Round(p.Precision), amount: amt})
		b.asks = append(b.asks, bookLevel{price: p.mid.Add(off).Round(p.Precision), amount: amt})
	}
	return b
}

func newBook(bids, asks []Level) *book {
	conv := func(ls []Level) []bookLevel {
		out := make([]bookLevel, 0, len(ls))
		for _, l := range ls {
			out = append(out, bookLevel{price: decimal.RequireFromString(l.Price), amount: decimal.RequireFromString(l.Amount)})
		}
		return out
	}
	return &book{bids: conv(bids), asks: conv(asks), id: firstBookID}
}

func (s *Server) handlePairs(*call) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Pair, 0, len(s.pairs))
	for _, p := range s.pairs {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Pair) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// pairParam reads currency_pair.
func (s *Server) pairParam(value string) (*Pair, *apiError) {
	if value == "" {
		return nil, missingParam("currency_pair")
	}
	s.mu.Lock()
	p := s.pairs[value]
	s.mu.Unlock()
	if p == nil {
		return nil, errorf(http.StatusBadRequest, "INVALID_CURRENCY_PAIR", "Invalid currency pair %s", value)
	}
	return p, nil
}

func (s *Server) handleBook(c *call) (any, *apiError) {
	p, e := s.pairParam(c.query.Get("currency_pair"))
	if e != nil {
		return nil, e
	}
	limit, e := intParam(c.query, "limit", 10)
	if e != nil {
		return nil, e
	}
	if limit < 1 || limit > 1000 {
		return nil, errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Invalid request parameter `limit` value: %d", limit)
	}
	if iv := c.query.Get("interval"); iv != "" && iv != "0" {
		return nil, invalidParam("interval", iv) // merged depth is not simulated
	}
	side := func(ls []bookLevel) [][]string {
		out := [][]string{}
		for _, l := range ls[:min(len(ls), int(limit))] {
			out = append(out, []string{decimalText(l.price), decimalText(l.amount)})
		}
		return out
	}
	s.mu.Lock()
	b := s.books[p.ID]
	out := map[string]any{
		"current": c.now.UnixMilli(),
		"update":  c.now.Add(-2 * time.Millisecond).UnixMilli(),
		"asks":    side(b.asks),
		"bids":    side(b.bids),
	}
	if c.query.Get("with_id") == "true" {
		out["id"] = b.id
	}
	s.mu.Unlock()
	return out, nil
}

// Candle intervals Gate serves. 30d is a calendar month (UTC); 7d buckets
// start at multiples of 7 days since the epoch.
var candleIntervals = map[string]time.Duration{
	"10s": 10 * time.Second, "1m": time.Minute, "5m": 5 * time.Minute, "15m": 15 * time.Minute,
	"30m": 30 * time.Minute, "1h": time.Hour, "4h": 4 * time.Hour, "8h": 8 * time.Hour,
	"1d": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 0,
}

// bucketStart aligns t to the interval.
func bucketStart(interval string, t time.Time) time.Time {
	t = t.UTC()
	if interval == "30d" {
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	d := candleIntervals[interval]
	return time.UnixMilli(t.UnixMilli() - t.UnixMilli()%d.Milliseconds()).UTC()
}

// bucketNext is the start of the bucket after start.
func bucketNext(interval string, start time.Time) time.Time {
	if interval == "30d" {
		return start.AddDate(0, 1, 0)
	}
	return start.Add(candleIntervals[interval])
}

// bucketPrev is the start of the bucket before start.
func bucketPrev(interval string, start time.Time) time.Time {
	if interval == "30d" {
		return start.AddDate(0, -1, 0)
	}
	return start.Add(-candleIntervals[interval])
}

// Candle is one candlestick of the fake, as decimal strings.
type Candle struct {
	Open, High, Low, Close string
	// BaseVolume and QuoteVolume are the traded amounts in each asset.
	BaseVolume, QuoteVolume string
}

// Candle returns the fake's candlestick of a pair and Gate interval
// ("1m", "1d", "30d", ...) starting at open: a pure function of the
// three, so tests can compute what the adapter should build.
func (s *Server) Candle(pairID, interval string, open time.Time) Candle {
	s.mu.Lock()
	p := s.pairs[pairID]
	s.mu.Unlock()
	if p == nil {
		return Candle{}
	}
	return candleOf(p, interval, open)
}

func candleOf(p *Pair, interval string, open time.Time) Candle {
	h := sha256.Sum256([]byte(p.ID + "|" + interval + "|" + strconv.FormatInt(open.Unix(), 10)))
	r := func(i int, span int64) int64 { return int64(binary.BigEndian.Uint32(h[i*4:]) % uint32(span)) }
	// Prices within ±2% of the middle, in ticks of the price precision.
	step := decimal.New(1, -p.Precision)
	spread := p.mid.Div(decimal.NewFromInt(50))
	at := func(i int) decimal.Decimal {
		frac := decimal.NewFromInt(r(i, 2001) - 1000).Div(decimal.NewFromInt(1000))
		return p.mid.Add(spread.Mul(frac)).Round(p.Precision)
	}
	o, c := at(0), at(1)
	hi := decimal.Max(o, c).Add(step.Mul(decimal.NewFromInt(r(2, 50))))
	lo := decimal.Min(o, c).Sub(step.Mul(decimal.NewFromInt(r(3, 50))))
	if !lo.IsPositive() {
		lo = step
	}
	vol := p.unit.Mul(decimal.NewFromInt(1 + r(4, 400))).Div(decimal.NewFromInt(10)).RoundDown(p.AmountPrecision)
	qv := vol.Mul(o.Add(c).Div(decimal.NewFromInt(2))).Round(8)
	return Candle{Open: decimalText(o), High: decimalText(hi), Low: decimalText(lo), Close: decimalText(c),
		BaseVolume: decimalText(vol), QuoteVolume: decimalText(qv)}
}

// Candlestick caps of Gate (ccxt issues quoting Gate's answers).
const (
	maxCandlePoints = 1000
	maxCandlesAgo   = 10000
)

func (s *Server) handleCandles(c *call) (any, *apiError) {
	p, e := s.pairParam(c.query.Get("currency_pair"))
	if e != nil {
		return nil, e
	}
	interval := c.query.Get("interval")
	if interval == "" {
		interval = "30m"
	}
	if _, ok := candleIntervals[interval]; !ok {
		return nil, invalidParam("interval", interval)
	}
	_, hasLimit := c.query["limit"]
	_, hasFrom := c.query["from"]
	_, hasTo := c.query["to"]
	if hasLimit && (hasFrom || hasTo) {
		return nil, errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Invalid request parameter `limit` value: %s", c.query.Get("limit"))
	}
	current := bucketStart(interval, c.now)
	var first, last time.Time
	if hasFrom || hasTo {
		to, e := intParam(c.query, "to", c.now.Unix())
		if e != nil {
			return nil, e
		}
		last = bucketStart(interval, time.Unix(to, 0))
		if last.After(current) {
			last = current
		}
		from, e := intParam(c.query, "from", 0)
		if e != nil {
			return nil, e
		}
		if !hasFrom {
			first = last
			for range 99 {
				first = bucketPrev(interval, first)
			}
		} else {
			first = bucketStart(interval, time.Unix(from, 0))
			if first.Unix() < from {
				first = bucketNext(interval, first)
			}
		}
		oldest := current.AddDate(0, -maxCandlesAgo, 0)
		if d := candleIntervals[interval]; d > 0 {
			oldest = current.Add(-maxCandlesAgo * d)
		}
		if first.Before(oldest) {
			return nil, errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Candlestick too long ago. Maximum %d points ago are allowed", maxCandlesAgo)
		}
		n := 0
		for t := first; !t.After(last); t = bucketNext(interval, t) {
			if n++; n > maxCandlePoints {
				return nil, errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Candlestick range too broad. Maximum %d data points are allowed per request", maxCandlePoints)
			}
		}
	} else {
		limit, e := intParam(c.query, "limit", 100)
		if e != nil {
			return nil, e
		}
		if limit < 1 || limit > maxCandlePoints {
			return nil, errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Invalid request parameter `limit` value: %d", limit)
		}
		last, first = current, current
		for range limit - 1 {
			first = bucketPrev(interval, first)
		}
	}
	rows := [][]string{}
	var live *liveCandle // a copy of the candle trades moved (TradeCandle)
	s.mu.Lock()
	if lc := s.candles[interval+"_"+p.ID]; lc != nil {
		cp := *lc
		live = &cp
	}
	s.mu.Unlock()
	for t := first; !t.After(last); t = bucketNext(interval, t) {
		k := candleOf(p, interval, t)
		if live != nil && live.open.Equal(t) {
			k = live.Candle
		}
		closed := "true"
		if t.Equal(current) {
			closed = "false"
		}
		rows = append(rows, []string{strconv.FormatInt(t.Unix(), 10), k.QuoteVolume, k.Close, k.High, k.Low, k.Open, k.BaseVolume, closed})
	}
	return rows, nil
}
