package exgate

import (
	"fmt"
	"strings"
	"time"
)

// Symbol is a trading pair: Base is asset1, Quote is asset2, both upper-case
// common asset codes (BTC, never XBT).
type Symbol struct {
	Base  string
	Quote string
}

// String writes the pair as BASE/QUOTE.
func (s Symbol) String() string { return s.Base + "/" + s.Quote }

// Inverse is the pair the other way round.
func (s Symbol) Inverse() Symbol { return Symbol{Base: s.Quote, Quote: s.Base} }

// Interval is a normalized kline interval.
type Interval string

// The normalized kline intervals of docs/contract.md 2.3. Every exchange serves all
// of them; adapters build the ones their exchange lacks from finer klines.
const (
	Interval1m  Interval = "1m"
	Interval3m  Interval = "3m"
	Interval5m  Interval = "5m"
	Interval15m Interval = "15m"
	Interval30m Interval = "30m"
	Interval1h  Interval = "1h"
	Interval2h  Interval = "2h"
	Interval4h  Interval = "4h"
	Interval6h  Interval = "6h"
	Interval8h  Interval = "8h"
	Interval12h Interval = "12h"
	Interval1d  Interval = "1d"
	Interval3d  Interval = "3d"
	Interval1w  Interval = "1w"
	Interval1M  Interval = "1M"
)

// Intervals lists the normalized intervals from finest to coarsest.
var Intervals = []Interval{
	Interval1m, Interval3m, Interval5m, Interval15m, Interval30m,
	Interval1h, Interval2h, Interval4h, Interval6h, Interval8h, Interval12h,
	Interval1d, Interval3d, Interval1w, Interval1M,
}

var intervalDurations = map[Interval]time.Duration{
	Interval1m:  time.Minute,
	Interval3m:  3 * time.Minute,
	Interval5m:  5 * time.Minute,
	Interval15m: 15 * time.Minute,
	Interval30m: 30 * time.Minute,
	Interval1h:  time.Hour,
	Interval2h:  2 * time.Hour,
	Interval4h:  4 * time.Hour,
	Interval6h:  6 * time.Hour,
	Interval8h:  8 * time.Hour,
	Interval12h: 12 * time.Hour,
	Interval1d:  24 * time.Hour,
	Interval3d:  72 * time.Hour,
	Interval1w:  7 * 24 * time.Hour,
}

// ParseInterval checks s against the normalized intervals. Case matters:
// 1m is a minute, 1M a month.
func ParseInterval(s string) (Interval, error) {
	iv := Interval(s)
	if iv == Interval1M {
		return iv, nil
	}
	if _, ok := intervalDurations[iv]; ok {
		return iv, nil
	}
	return "", fmt.Errorf("unknown interval %q", s)
}

// Duration is the fixed length of the interval; 0 for 1M, whose length
// varies.
func (iv Interval) Duration() time.Duration { return intervalDurations[iv] }

// Start returns the UTC-aligned start of the interval containing t. Minute,
// hour and day intervals align to multiples of their length since the Unix
// epoch (as every exchange does), 1w to Monday 00:00 UTC, 1M to the first of
// the month, 3d to multiples of three days since the epoch.
func (iv Interval) Start(t time.Time) time.Time {
	t = t.UTC()
	switch iv {
	case Interval1M:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	case Interval1w:
		day := t.Truncate(24 * time.Hour)
		offset := (int(day.Weekday()) + 6) % 7 // days since Monday
		return day.AddDate(0, 0, -offset)
	}
	d := iv.Duration()
	return time.UnixMilli(t.UnixMilli() - t.UnixMilli()%d.Milliseconds()).UTC()
}

// Next returns the start of the interval after the one starting at start.
func (iv Interval) Next(start time.Time) time.Time {
	if iv == Interval1M {
		return start.AddDate(0, 1, 0)
	}
	if iv == Interval1w {
		return start.AddDate(0, 0, 7)
	}
	return start.Add(iv.Duration())
}

// Previous returns the start of the interval before the one starting at
// start.
func (iv Interval) Previous(start time.Time) time.Time {
	switch iv {
	case Interval1M:
		return start.AddDate(0, -1, 0)
	case Interval1w:
		return start.AddDate(0, 0, -7)
	}
	return start.Add(-iv.Duration())
}

// Kline is one candlestick. Prices and volume are plain decimal strings
// exactly as the exchange reported them (no exponent); CloseTime is
// OpenTime + interval - 1 ms. NumberOfTrades is nil when the exchange does
// not report it.
type Kline struct {
	OpenTime       int64   `json:"openTime"`
	OpenPrice      string  `json:"openPrice"`
	HighPrice      string  `json:"highPrice"`
	LowPrice       string  `json:"lowPrice"`
	ClosePrice     string  `json:"closePrice"`
	Volume         string  `json:"volume"`
	CloseTime      int64   `json:"closeTime"`
	NumberOfTrades *uint64 `json:"numberOfTrades"`
}

// KlineRequest asks for the most recent Limit klines of Symbol.
type KlineRequest struct {
	Symbol   Symbol
	Interval Interval
	Limit    int
}

// Level is one price level of an order book, decimals in plain notation.
type Level struct {
	Price    string `json:"price"`
	Quantity string `json:"quantity"`
}

// OrderBook holds bids by price descending and asks ascending.
type OrderBook struct {
	Bids []Level `json:"bids"`
	Asks []Level `json:"asks"`
}

// OrderBookRequest asks for at most Limit levels per side of Symbol.
type OrderBookRequest struct {
	Symbol Symbol
	Limit  int
}

// Limits of the market-data routes (docs/contract.md 2.3).
const (
	DefaultKlineLimit     = 100
	MaxKlineLimit         = 1000
	DefaultOrderBookLimit = 100
	MaxOrderBookLimit     = 1000
)

// NormalizeAsset returns the upper-case form of an asset code as a client
// wrote it.
func NormalizeAsset(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }
