package binancefake

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// market is one listed symbol with its filters and its static book.
type market struct {
	symbol, base, quote, status string
	basePrec, quotePrec         int32
	quoteOrderAllowed           bool

	tickExp                  int32 // tick = 10^-tickExp
	lotMin, lotMax, lotStep  decimal.Decimal
	mktMin, mktMax, mktStep  decimal.Decimal
	notionalFilter           string // NOTIONAL or MIN_NOTIONAL
	minNotional, maxNotional decimal.Decimal
	midTicks, spacing        int64
	unit                     int64           // base quantity scale of a level, whole units
	bids, asks               []level         // best first; replaced (never changed in place) under Server.mu
	bookID                   int64           // the book's last update id, under Server.mu
	avgPrice                 decimal.Decimal // reference price for notional filters
}

// level is one price level: the price in ticks and the quantity in tenths
// of the base asset.
type level struct{ ticks, tenths int64 }

func (m *market) levelPrice(l level) decimal.Decimal { return m.price(l.ticks) }

func levelQty(l level) decimal.Decimal { return decimal.New(l.tenths, -1) }

// levelText writes a level as ["price","quantity"].
func (m *market) levelText(l level) string {
	return `["` + fixed8(l.ticks, m.tickExp) + `","` + fixed8(l.tenths, 1) + `"]`
}

const bookLevels = 1000

// dec parses a decimal literal of the static market data.
func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// newMarkets lists the fake's symbols. Steps and minimums follow the shape
// of Binance's live filters (BTCUSDT: LOT_SIZE step 0.00001, NOTIONAL 5
// applied to MARKET orders, MARKET_LOT_SIZE without a step). XRPUSDT keeps
// the legacy MIN_NOTIONAL filter and refuses quoteOrderQty; LTCUSDT is in
// BREAK.
func newMarkets() map[string]*market {
	defs := []*market{
		{symbol: "BTCUSDT", base: "BTC", quote: "USDT", basePrec: 8, quotePrec: 8, quoteOrderAllowed: true, tickExp: 2,
			lotMin: dec("0.00001"), lotMax: dec("9000"), lotStep: dec("0.00001"), mktMin: dec("0"), mktMax: dec("120"), mktStep: dec("0"),
			notionalFilter: "NOTIONAL", minNotional: dec("5"), maxNotional: dec("9000000"), midTicks: 6000000, spacing: 50, unit: 1},
		{symbol: "ETHUSDT", base: "ETH", quote: "USDT", basePrec: 8, quotePrec: 8, quoteOrderAllowed: true, tickExp: 2,
			lotMin: dec("0.0001"), lotMax: dec("9000"), lotStep: dec("0.0001"), mktMin: dec("0"), mktMax: dec("2000"), mktStep: dec("0"),
			notionalFilter: "NOTIONAL", minNotional: dec("5"), maxNotional: dec("9000000"), midTicks: 300000, spacing: 5, unit: 10},
		{symbol: "ETHBTC", base: "ETH", quote: "BTC", basePrec: 8, quotePrec: 8, quoteOrderAllowed: true, tickExp: 5,
			lotMin: dec("0.0001"), lotMax: dec("100000"), lotStep: dec("0.0001"), mktMin: dec("0"), mktMax: dec("1500"), mktStep: dec("0"),
			notionalFilter: "NOTIONAL", minNotional: dec("0.0001"), maxNotional: dec("9000000"), midTicks: 5000, spacing: 1, unit: 10},
		{symbol: "SOLUSDT", base: "SOL", quote: "USDT", basePrec: 8, quotePrec: 8, quoteOrderAllowed: true, tickExp: 2,
			lotMin: dec("0.001"), lotMax: dec("90000"), lotStep: dec("0.001"), mktMin: dec("0"), mktMax: dec("20000"), mktStep: dec("0"),
			notionalFilter: "NOTIONAL", minNotional: dec("5"), maxNotional: dec("9000000"), midTicks: 15000, spacing: 1, unit: 100},
		{symbol: "BNBUSDT", base: "BNB", quote: "USDT", basePrec: 8, quotePrec: 8, quoteOrderAllowed: true, tickExp: 2,
			lotMin: dec("0.001"), lotMax: dec("9000"), lotStep: dec("0.001"), mktMin: dec("0"), mktMax: dec("5000"), mktStep: dec("0"),
			notionalFilter: "NOTIONAL", minNotional: dec("5"), maxNotional: dec("9000000"), midTicks: 60000, spacing: 1, unit: 20},
		{symbol: "XRPUSDT", base: "XRP", quote: "USDT", basePrec: 8, quotePrec: 8, quoteOrderAllowed: false, tickExp: 4,
			lotMin: dec("0.1"), lotMax: dec("9000000"), lotStep: dec("0.1"), mktMin: dec("0.1"), mktMax: dec("1000000"), mktStep: dec("0.1"),
			notionalFilter: "MIN_NOTIONAL", minNotional: dec("5"), midTicks: 6000, spacing: 1, unit: 10000},
		{symbol: "LTCUSDT", base: "LTC", quote: "USDT", status: "BREAK", basePrec: 8, quotePrec: 8, quoteOrderAllowed: true, tickExp: 2,
			lotMin: dec("0.001"), lotMax: dec("9000"), lotStep: dec("0.001"), mktMin: dec("0"), mktMax: dec("5000"), mktStep: dec("0"),
			notionalFilter: "NOTIONAL", minNotional: dec("5"), maxNotional: dec("9000000"), midTicks: 8000, spacing: 1, unit: 50},
	}
	out := make(map[string]*market, len(defs))
	for _, m := range defs {
		if m.status == "" {
			m.status = "TRADING"
		}
		m.buildBook()
		m.bookID = firstBookID
		out[m.symbol] = m
	}
	return out
}

// price converts ticks to a decimal price.
func (m *market) price(ticks int64) decimal.Decimal { return decimal.New(ticks, -m.tickExp) }

// buildBook lays out bookLevels levels a side around the mid price.
func (m *market) buildBook() {
	m.avgPrice = m.price(m.midTicks)
	m.bids = make([]level, 0, bookLevels)
	m.asks = make([]level, 0, bookLevels)
	for i := range int64(bookLevels) {
		tenths := m.unit * (5 + (i*7)%10)
		bid, ask := m.midTicks-m.spacing*(i+1), m.midTicks+m.spacing*(i+1)
		if bid <= 0 {
			break
		}
		m.bids = append(m.bids, level{ticks: bid, tenths: tenths})
		m.asks = append(m.asks, level{ticks: ask, tenths: tenths})
	}
}

// fixed8 writes units x 10^-exp (exp at most 8) with 8 decimals, as
// Binance writes prices and quantities.
func fixed8(units int64, exp int32) string {
	for range 8 - exp {
		units *= 10
	}
	frac := strconv.FormatInt(units%100_000_000, 10)
	return strconv.FormatInt(units/100_000_000, 10) + "." + strings.Repeat("0", 8-len(frac)) + frac
}

// filterJSON is one entry of a symbol's filters in exchangeInfo.
type filterJSON map[string]any

func (m *market) filters() []filterJSON {
	tick := decimal.New(1, -m.tickExp).StringFixed(8)
	fs := []filterJSON{
		{"filterType": "PRICE_FILTER", "minPrice": tick, "maxPrice": "1000000.00000000", "tickSize": tick},
		{"filterType": "LOT_SIZE", "minQty": m.lotMin.StringFixed(8), "maxQty": m.lotMax.StringFixed(8), "stepSize": m.lotStep.StringFixed(8)},
		{"filterType": "ICEBERG_PARTS", "limit": 10},
		{"filterType": "MARKET_LOT_SIZE", "minQty": m.mktMin.StringFixed(8), "maxQty": m.mktMax.StringFixed(8), "stepSize": m.mktStep.StringFixed(8)},
		{"filterType": "TRAILING_DELTA", "minTrailingAboveDelta": 10, "maxTrailingAboveDelta": 2000, "minTrailingBelowDelta": 10, "maxTrailingBelowDelta": 2000},
		{"filterType": "PERCENT_PRICE_BY_SIDE", "bidMultiplierUp": "5", "bidMultiplierDown": "0.2", "askMultiplierUp": "5", "askMultiplierDown": "0.2", "avgPriceMins": 5},
	}
	if m.notionalFilter == "MIN_NOTIONAL" {
		fs = append(fs, filterJSON{"filterType": "MIN_NOTIONAL", "minNotional": m.minNotional.StringFixed(8), "applyToMarket": true, "avgPriceMins": 5})
	} else {
		fs = append(fs, filterJSON{"filterType": "NOTIONAL", "minNotional": m.minNotional.StringFixed(8), "applyMinToMarket": true,
			"maxNotional": m.maxNotional.StringFixed(8), "applyMaxToMarket": false, "avgPriceMins": 5})
	}
	return append(fs,
		filterJSON{"filterType": "MAX_NUM_ORDERS", "maxNumOrders": 200},
		filterJSON{"filterType": "MAX_NUM_ALGO_ORDERS", "maxNumAlgoOrders": 5})
}

func (m *market) infoJSON() map[string]any {
	return map[string]any{
		"symbol": m.symbol, "status": m.status,
		"baseAsset": m.base, "baseAssetPrecision": m.basePrec,
		"quoteAsset": m.quote, "quotePrecision": m.quotePrec, "quoteAssetPrecision": m.quotePrec,
		"baseCommissionPrecision": m.basePrec, "quoteCommissionPrecision": m.quotePrec,
		"orderTypes":                      []string{"LIMIT", "LIMIT_MAKER", "MARKET", "STOP_LOSS_LIMIT", "TAKE_PROFIT_LIMIT"},
		"icebergAllowed":                  true,
		"ocoAllowed":                      true,
		"otoAllowed":                      true,
		"opoAllowed":                      true,
		"quoteOrderQtyMarketAllowed":      m.quoteOrderAllowed,
		"allowTrailingStop":               true,
		"cancelReplaceAllowed":            true,
		"amendAllowed":                    true,
		"pegInstructionsAllowed":          true,
		"isSpotTradingAllowed":            true,
		"isMarginTradingAllowed":          false,
		"filters":                         m.filters(),
		"permissions":                     []string{},
		"permissionSets":                  [][]string{{"SPOT"}},
		"defaultSelfTradePreventionMode":  "EXPIRE_MAKER",
		"allowedSelfTradePreventionModes": []string{"EXPIRE_TAKER", "EXPIRE_MAKER", "EXPIRE_BOTH", "DECREMENT"},
	}
}

// symbolOrder lists the symbols in a stable order.
var symbolOrder = []string{"BTCUSDT", "ETHUSDT", "ETHBTC", "SOLUSDT", "BNBUSDT", "XRPUSDT", "LTCUSDT"}

func (s *Server) encodeInfo(symbols []string) []byte {
	limit := s.weightLimit
	if limit < 0 {
		limit = math.MaxInt32
	}
	syms := make([]map[string]any, 0, len(symbols))
	for _, name := range symbols {
		syms = append(syms, s.markets[name].infoJSON())
	}
	info := map[string]any{
		"timezone":   "UTC",
		"serverTime": 0,
		"rateLimits": []map[string]any{
			{"rateLimitType": "REQUEST_WEIGHT", "interval": "MINUTE", "intervalNum": 1, "limit": limit},
			{"rateLimitType": "ORDERS", "interval": "SECOND", "intervalNum": 10, "limit": 100},
			{"rateLimitType": "ORDERS", "interval": "DAY", "intervalNum": 1, "limit": 200000},
			{"rateLimitType": "RAW_REQUESTS", "interval": "MINUTE", "intervalNum": 5, "limit": 300000},
		},
		"exchangeFilters": []any{},
		"symbols":         syms,
	}
	b, err := json.Marshal(info)
	if err != nil {
		panic(err) // static data
	}
	return b
}

func (s *Server) encodeExchangeInfo() []byte { return s.encodeInfo(symbolOrder) }

func (s *Server) handleExchangeInfo(c *call) response {
	var names []string
	switch {
	case c.get("symbol") != "":
		names = []string{c.get("symbol")}
	case c.get("symbols") != "":
		if err := json.Unmarshal([]byte(c.get("symbols")), &names); err != nil {
			return apiErr(http.StatusBadRequest, -1100, "Illegal characters found in parameter 'symbols'; legal range is '^\\[(\"[A-Z0-9-_.]{1,20}\"(,\"[A-Z0-9-_.]{1,20}\"){0,}){0,1}\\]$'.")
		}
	case c.get("symbolStatus") != "":
		for _, n := range symbolOrder {
			if s.markets[n].status == c.get("symbolStatus") {
				names = append(names, n)
			}
		}
		return ok(s.encodeInfo(names))
	default:
		return ok(s.exchangeInfo)
	}
	for _, n := range names {
		if s.markets[n] == nil {
			return apiErr(http.StatusBadRequest, -1121, "Invalid symbol.")
		}
	}
	return ok(s.encodeInfo(names))
}

type depthKey struct {
	symbol string
	limit  int
	id     int64
}

func (s *Server) handleDepth(c *call) response {
	m := s.markets[c.get("symbol")]
	if m == nil {
		return apiErr(http.StatusBadRequest, -1121, "Invalid symbol.")
	}
	limit := 100
	if v := c.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return apiErr(http.StatusBadRequest, -1100, "Illegal characters found in parameter 'limit'; legal range is '^[0-9]{1,20}$'.")
		}
		limit = min(n, 5000)
	}
	if st := c.get("symbolStatus"); st != "" && st != m.status {
		return apiErr(http.StatusBadRequest, -1220, "The symbol's status does not match the requested symbolStatus.")
	}
	s.mu.Lock()
	bids, asks, id := m.bids, m.asks, m.bookID
	s.mu.Unlock()
	key := depthKey{m.symbol, limit, id}
	if b, ok := s.depthCache.Load(key); ok {
		return response{status: http.StatusOK, body: b.([]byte)}
	}
	n := min(limit, len(bids))
	var b strings.Builder
	b.WriteString(`{"lastUpdateId":` + strconv.FormatInt(id, 10) + `,"bids":[`)
	for i, l := range bids[:n] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.levelText(l))
	}
	b.WriteString(`],"asks":[`)
	for i, l := range asks[:min(limit, len(asks))] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.levelText(l))
	}
	b.WriteString(`]}`)
	body := []byte(b.String())
	s.depthCache.Store(key, body)
	return ok(body)
}

// klineIntervals are the interval names Binance accepts (enums.md).
var klineIntervals = map[string]exgate.Interval{
	"1m": exgate.Interval1m, "3m": exgate.Interval3m, "5m": exgate.Interval5m, "15m": exgate.Interval15m, "30m": exgate.Interval30m,
	"1h": exgate.Interval1h, "2h": exgate.Interval2h, "4h": exgate.Interval4h, "6h": exgate.Interval6h, "8h": exgate.Interval8h,
	"12h": exgate.Interval12h, "1d": exgate.Interval1d, "3d": exgate.Interval3d, "1w": exgate.Interval1w, "1M": exgate.Interval1M,
}

type klineKey struct {
	symbol, interval string
	limit            int
	current          int64
}

func (s *Server) handleKlines(c *call) response {
	m := s.markets[c.get("symbol")]
	if m == nil {
		return apiErr(http.StatusBadRequest, -1121, "Invalid symbol.")
	}
	ivName := c.get("interval")
	iv, found := klineIntervals[ivName]
	if !found {
		return apiErr(http.StatusBadRequest, -1120, "Invalid interval.")
	}
	limit := 500
	if v := c.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return apiErr(http.StatusBadRequest, -1100, "Illegal characters found in parameter 'limit'; legal range is '^[0-9]{1,20}$'.")
		}
		limit = min(n, 1000)
	}
	var start, end int64
	for name, dst := range map[string]*int64{"startTime": &start, "endTime": &end} {
		if v := c.get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return apiErr(http.StatusBadRequest, -1100, "Illegal characters found in parameter '"+name+"'; legal range is '^[0-9]{1,20}$'.")
			}
			*dst = n
		}
	}
	current := iv.Start(c.now)
	if start == 0 && end == 0 {
		key := klineKey{m.symbol, ivName, limit, current.UnixMilli()}
		s.klineMu.Lock()
		b, hit := s.klineCache[key]
		s.klineMu.Unlock()
		if hit {
			return s.tickCurrent(b, m, ivName, iv, current)
		}
		b = encodeKlines(m, ivName, iv, klineTimes(iv, current, limit))
		s.klineMu.Lock()
		if len(s.klineCache) > 4096 {
			clear(s.klineCache)
		}
		s.klineCache[key] = b
		s.klineMu.Unlock()
		return s.tickCurrent(b, m, ivName, iv, current)
	}
	var opens []time.Time
	if start != 0 {
		for t := iv.Start(time.UnixMilli(start)); len(opens) < limit && !t.After(current) && (end == 0 || t.UnixMilli() <= end); t = iv.Next(t) {
			opens = append(opens, t)
		}
	} else {
		last := iv.Start(time.UnixMilli(end))
		if last.After(current) {
			last = current
		}
		opens = klineTimes(iv, last, limit)
	}
	return ok(encodeKlines(m, ivName, iv, opens))
}

// tickCurrent answers with the cached klines b, whose last row is the
// current kline; with TickCurrentKline on, that row is written anew with
// this call's trade.
func (s *Server) tickCurrent(b []byte, m *market, ivName string, iv exgate.Interval, current time.Time) response {
	extra := s.liveExtra(m.symbol, ivName, current) // trades TradeKline added
	if s.tick.Load() {
		extra += s.ticks.Add(1)
	}
	if extra == 0 {
		return ok(b)
	}
	cut := bytes.LastIndexByte(b, '[')
	row := appendKlineRow(make([]byte, 0, 200), m, ivName, iv, current, extra)
	return response{status: http.StatusOK, body: b[:cut], tail: append(row, ']')}
}

// klineTimes lists the open times of the n intervals ending with last.
func klineTimes(iv exgate.Interval, last time.Time, n int) []time.Time {
	out := make([]time.Time, n)
	t := last
	for i := n - 1; i >= 0; i-- {
		out[i] = t
		switch iv {
		case exgate.Interval1M:
			t = t.AddDate(0, -1, 0)
		case exgate.Interval1w:
			t = t.AddDate(0, 0, -7)
		default:
			t = t.Add(-iv.Duration())
		}
	}
	return out
}

// encodeKlines writes kline rows; every value is a pure function of the
// symbol, the interval and the open time.
func encodeKlines(m *market, ivName string, iv exgate.Interval, opens []time.Time) []byte {
	b := make([]byte, 0, 160*len(opens)+2)
	b = append(b, '[')
	for i, t := range opens {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKlineRow(b, m, ivName, iv, t, 0)
	}
	return append(b, ']')
}

// klineVals are the values of one kline, as Binance writes them.
type klineVals struct {
	open, high, low, close, volume, quoteVolume, takerBase, takerQuote string
	trades                                                             int64
}

// klineValues computes the kline opening at t, with extra trades (each
// of a thousandth of the base asset) on top of its own: a pure function
// of its arguments.
func klineValues(m *market, ivName string, t time.Time, extra int64) klineVals {
	open := t.UnixMilli()
	h := fnv.New64a()
	h.Write([]byte(m.symbol))
	h.Write([]byte(ivName))
	h.Write(strconv.AppendInt(nil, open, 10))
	x := h.Sum64()
	move := func(shift uint) int64 { return m.midTicks * (int64((x>>shift)%2001) - 1000) / 100000 }
	o := m.midTicks + move(0)
	cl := m.midTicks + move(11)
	hi := max(o, cl) + m.midTicks*int64((x>>22)%300)/100000
	lo := min(o, cl) - m.midTicks*int64((x>>31)%300)/100000
	vol := int64((x>>40)%1000000) + 1000 + extra // thousandths of the base asset
	trades := int64((x>>20)%5000) + 1 + extra
	qv := decimal.New(vol, -3).Mul(m.price(cl))
	return klineVals{open: m.price(o).StringFixed(8), high: m.price(hi).StringFixed(8), low: m.price(lo).StringFixed(8), close: m.price(cl).StringFixed(8),
		volume: decimal.New(vol, -3).StringFixed(8), quoteVolume: qv.StringFixed(8), trades: trades,
		takerBase: decimal.New(vol/2, -3).StringFixed(8), takerQuote: qv.Div(decimal.NewFromInt(2)).StringFixed(8)}
}

// appendKlineRow writes the row opening at t as GET /api/v3/klines does.
func appendKlineRow(b []byte, m *market, ivName string, iv exgate.Interval, t time.Time, extra int64) []byte {
	v := klineValues(m, ivName, t, extra)
	b = append(b, '[')
	b = strconv.AppendInt(b, t.UnixMilli(), 10)
	for _, v := range []string{v.open, v.high, v.low, v.close, v.volume} {
		b = append(b, ',', '"')
		b = append(b, v...)
		b = append(b, '"')
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, iv.Next(t).UnixMilli()-1, 10)
	b = append(b, `,"`...)
	b = append(b, v.quoteVolume...)
	b = append(b, `",`...)
	b = strconv.AppendInt(b, v.trades, 10)
	b = append(b, `,"`...)
	b = append(b, v.takerBase...)
	b = append(b, `","`...)
	b = append(b, v.takerQuote...)
	return append(b, `","0"]`...)
}
