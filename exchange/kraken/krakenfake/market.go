package krakenfake

import (
	"encoding/binary"
	"hash/fnv"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Asset is a row of the fake's Assets answer.
type Asset struct {
	ID, Altname               string
	Decimals, DisplayDecimals int
}

// Pair is a row of the fake's AssetPairs answer; Mid is the centre of its
// generated book and candles.
type Pair struct {
	Key, Altname, Wsname, Base, Quote       string
	PairDecimals, LotDecimals, CostDecimals int32
	OrderMin, CostMin                       string
	// Status is online, cancel_only…; empty leaves the field out (as on
	// some live rows, meaning online).
	Status string
	Mid    string
}

// Level is one order book level.
type Level struct {
	Price, Volume decimal.Decimal
}

type book struct{ bids, asks []Level }

// defaultAssets are Kraken's real ids and altnames for the fake's assets:
// legacy X/Z-prefixed ids, plain ids (USDT, SOL, DOT) and plain ids that
// start with X or Z (XTZ, ZRX), plus suffixed earn assets.
func defaultAssets() []Asset {
	return []Asset{
		{"XXBT", "XBT", 10, 5},
		{"XETH", "ETH", 10, 5},
		{"ZUSD", "USD", 4, 2},
		{"ZEUR", "EUR", 4, 2},
		{"USDT", "USDT", 8, 4},
		{"SOL", "SOL", 10, 5},
		{"XXRP", "XRP", 8, 5},
		{"XTZ", "XTZ", 8, 6},
		{"XZEC", "ZEC", 10, 5},
		{"XXDG", "XDG", 8, 2},
		{"XXLM", "XLM", 8, 5},
		{"ZRX", "ZRX", 8, 5},
		{"DOT", "DOT", 10, 8},
		{"KFEE", "FEE", 2, 2},
		{"ETH2", "ETH2", 10, 5},
		{"ETH2.S", "ETH2.S", 10, 5},
		{"XBT.F", "XBT.F", 10, 5},
	}
}

// defaultPairs are Kraken-like pairs with real keys, altnames and wsnames
// and realistic decimals and minimums.
func defaultPairs() []*Pair {
	return []*Pair{
		{"XXBTZUSD", "XBTUSD", "XBT/USD", "XXBT", "ZUSD", 1, 8, 5, "0.0001", "0.5", "online", "30000"},
		{"XXBTZEUR", "XBTEUR", "XBT/EUR", "XXBT", "ZEUR", 1, 8, 5, "0.0001", "0.5", "online", "28000"},
		{"XBTUSDT", "XBTUSDT", "XBT/USDT", "XXBT", "USDT", 1, 8, 5, "0.0001", "0.5", "online", "30010"},
		{"XETHZUSD", "ETHUSD", "ETH/USD", "XETH", "ZUSD", 2, 8, 5, "0.002", "0.5", "online", "2000"},
		{"ETHUSDT", "ETHUSDT", "ETH/USDT", "XETH", "USDT", 2, 8, 5, "0.002", "0.5", "online", "2001"},
		{"XETHXXBT", "ETHXBT", "ETH/XBT", "XETH", "XXBT", 5, 8, 10, "0.002", "0.00002", "online", "0.06667"},
		{"SOLUSD", "SOLUSD", "SOL/USD", "SOL", "ZUSD", 2, 8, 5, "0.02", "0.5", "online", "20"},
		{"SOLUSDT", "SOLUSDT", "SOL/USDT", "SOL", "USDT", 2, 8, 5, "0.02", "0.5", "online", "20.01"},
		{"XXRPZUSD", "XRPUSD", "XRP/USD", "XXRP", "ZUSD", 5, 8, 5, "2", "0.5", "online", "0.5"},
		{"XRPUSDT", "XRPUSDT", "XRP/USDT", "XXRP", "USDT", 5, 8, 5, "2", "0.5", "online", "0.5001"},
		{"XTZUSD", "XTZUSD", "XTZ/USD", "XTZ", "ZUSD", 4, 8, 5, "4", "0.5", "online", "0.8"},
		{"XZECZUSD", "ZECUSD", "ZEC/USD", "XZEC", "ZUSD", 2, 8, 5, "0.03", "0.5", "online", "30"},
		{"XDGUSD", "XDGUSD", "XDG/USD", "XXDG", "ZUSD", 7, 8, 5, "13", "0.5", "", "0.07"},
		{"XXLMZUSD", "XLMUSD", "XLM/USD", "XXLM", "ZUSD", 6, 8, 5, "15", "0.5", "online", "0.1"},
		{"ZRXUSD", "ZRXUSD", "ZRX/USD", "ZRX", "ZUSD", 4, 8, 5, "5", "0.5", "online", "0.25"},
		{"USDTZUSD", "USDTUSD", "USDT/USD", "USDT", "ZUSD", 4, 8, 5, "5", "0.5", "online", "1.0001"},
		{"DOTUSD", "DOTUSD", "DOT/USD", "DOT", "ZUSD", 4, 8, 5, "0.6", "0.5", "cancel_only", "5"},
	}
}

// generateBook builds 100 levels per side around the pair's mid price.
func generateBook(p *Pair) *book {
	mid := decimal.RequireFromString(p.Mid)
	tick := decimal.New(1, -p.PairDecimals)
	step := mid.Mul(decimal.RequireFromString("0.0001")).Truncate(p.PairDecimals)
	if step.LessThan(tick) {
		step = tick
	}
	unit := decimal.NewFromInt(2000).Div(mid).Truncate(min(p.LotDecimals, 4))
	if unit.IsZero() {
		unit = decimal.New(1, -p.LotDecimals)
	}
	b := &book{}
	for i := range 100 {
		off := step.Mul(decimal.NewFromInt(int64(i + 1)))
		qty := unit.Mul(decimal.NewFromInt(int64(1 + i%5)))
		b.bids = append(b.bids, Level{Price: mid.Sub(off), Volume: qty})
		b.asks = append(b.asks, Level{Price: mid.Add(off), Volume: qty})
	}
	return b
}

func (s *Server) pairByName(name string) *Pair {
	for _, p := range s.pairs {
		if p.Key == name || p.Altname == name {
			return p
		}
	}
	return nil
}

func (s *Server) assetByName(name string) (Asset, bool) {
	for _, a := range s.assets {
		if a.ID == name || a.Altname == name {
			return a, true
		}
	}
	return Asset{}, false
}

func (s *Server) assetDecimals(id string) int32 {
	if a, ok := s.assetByName(id); ok {
		return int32(a.Decimals)
	}
	return 8
}

func (s *Server) assetsInfo(q url.Values) (any, error) {
	out := map[string]any{}
	want := splitList(q.Get("asset"))
	for _, name := range want {
		if _, ok := s.assetByName(name); !ok {
			return nil, errUnknownAsset
		}
	}
	for _, a := range s.assets {
		if len(want) > 0 && !slices.Contains(want, a.ID) && !slices.Contains(want, a.Altname) {
			continue
		}
		out[a.ID] = map[string]any{
			"aclass":           "currency",
			"altname":          a.Altname,
			"decimals":         a.Decimals,
			"display_decimals": a.DisplayDecimals,
			"collateral_value": 1,
			"status":           "enabled",
		}
	}
	return out, nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func (s *Server) assetPairs(q url.Values) (any, error) {
	want := splitList(q.Get("pair"))
	for _, name := range want {
		if s.pairByName(name) == nil {
			return nil, errUnknownPair
		}
	}
	out := map[string]any{}
	for _, p := range s.pairs {
		if len(want) > 0 && !slices.Contains(want, p.Key) && !slices.Contains(want, p.Altname) {
			continue
		}
		row := map[string]any{
			"altname":             p.Altname,
			"wsname":              p.Wsname,
			"aclass_base":         "currency",
			"base":                p.Base,
			"aclass_quote":        "currency",
			"quote":               p.Quote,
			"lot":                 "unit",
			"cost_decimals":       p.CostDecimals,
			"pair_decimals":       p.PairDecimals,
			"lot_decimals":        p.LotDecimals,
			"lot_multiplier":      1,
			"leverage_buy":        []int{},
			"leverage_sell":       []int{},
			"fees":                [][]float64{{0, 0.26}, {50000, 0.24}, {100000, 0.22}},
			"fees_maker":          [][]float64{{0, 0.16}, {50000, 0.14}, {100000, 0.12}},
			"fee_volume_currency": "ZUSD",
			"margin_call":         80,
			"margin_stop":         40,
			"ordermin":            p.OrderMin,
			"costmin":             p.CostMin,
			"tick_size":           decimal.New(1, -p.PairDecimals).String(),
		}
		if p.Status != "" {
			row["status"] = p.Status
		}
		out[p.Key] = row
	}
	return out, nil
}

// ohlcIntervals are Kraken's OHLC intervals in minutes.
var ohlcIntervals = []int{1, 5, 15, 30, 60, 240, 1440, 10080, 21600}

// ohlc serves the 720 most recent candles ending with the current one.
func (s *Server) ohlc(q url.Values) (any, error) {
	p := s.pairByName(q.Get("pair"))
	if p == nil {
		return nil, errUnknownPair
	}
	minutes := 1
	if v := q.Get("interval"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || !slices.Contains(ohlcIntervals, n) {
			return nil, invalidArg("interval")
		}
		minutes = n
	}
	var since int64
	if v := q.Get("since"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, invalidArg("since")
		}
		since = n
	}
	step := int64(minutes) * 60
	now := s.now().Unix()
	last := now - now%step
	if minutes == 10080 && s.weeklyMonday {
		// Unix time 0 was a Thursday; Monday starts are 4 days later.
		const monday = 4 * 86400
		last = now - (now-monday)%step
	}
	rows := make([][]any, 0, 720)
	for k := int64(719); k >= 0; k-- {
		t := last - k*step
		if t <= since && k > 0 {
			continue
		}
		rows = append(rows, s.candle(p, minutes, t))
	}
	return map[string]any{p.Key: rows, "last": last - step}, nil
}

// candle is a deterministic candle of p for (interval, open time).
func (s *Server) candle(p *Pair, minutes int, t int64) []any {
	h := fnv.New64a()
	h.Write([]byte(p.Key))
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(minutes))
	binary.BigEndian.PutUint64(buf[8:], uint64(t))
	h.Write(buf[:])
	x := h.Sum64()
	part := func(mod uint64) int64 {
		v := int64(x % mod)
		x = x/mod ^ (x << 7)
		return v
	}
	// Prices in integer units of the pair's tick; a basis point of mid
	// is mid/10000.
	pd := p.PairDecimals
	mid := decimal.RequireFromString(p.Mid).Shift(pd).IntPart()
	move := func(bps int64) int64 { return mid + mid*bps/10000 }
	open, closing := move(part(200)-100), move(part(200)-100)
	high := max(open, closing) + mid*part(50)/10000
	low := min(open, closing) - mid*part(50)/10000
	count := part(40)
	volume := part(100000000)
	if count == 0 {
		volume = 0
		open, high, low = closing, closing, closing
	}
	price := func(v int64) string { return decimal.New(v, -pd).StringFixed(pd) }
	return []any{
		t, price(open), price(high), price(low), price(closing),
		price((high + low) / 2), decimal.New(volume, -6).StringFixed(8), count,
	}
}

// depth serves count levels per side (1..500, default 100).
func (s *Server) depth(q url.Values) (any, error) {
	p := s.pairByName(q.Get("pair"))
	if p == nil {
		return nil, errUnknownPair
	}
	count := 100
	if v := q.Get("count"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return nil, invalidArg("count")
		}
		count = n
	}
	b := s.books[p.Key]
	ts := s.now().Unix()
	side := func(ls []Level) [][]any {
		out := make([][]any, 0, min(len(ls), count))
		for _, l := range ls[:min(len(ls), count)] {
			out = append(out, []any{l.Price.StringFixed(max(p.PairDecimals, 5)), l.Volume.String(), ts})
		}
		return out
	}
	return map[string]any{p.Key: map[string]any{"asks": side(b.asks), "bids": side(b.bids)}}, nil
}

// unixFrac writes t as Kraken's fractional unix seconds (4 decimals).
func unixFrac(t time.Time) decimal.Decimal {
	return decimal.New(t.UnixNano(), -9).Truncate(4)
}
