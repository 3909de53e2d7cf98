package okxfake

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

// Instrument is one SPOT instrument of the fake, written as GET
// /public/instruments writes it.
type Instrument struct {
	InstID   string `json:"instId"`
	InstType string `json:"instType"`
	BaseCcy  string `json:"baseCcy"`
	QuoteCcy string `json:"quoteCcy"`
	State    string `json:"state"`
	TickSz   string `json:"tickSz"`
	LotSz    string `json:"lotSz"`
	MinSz    string `json:"minSz"`
	MaxLmtSz string `json:"maxLmtSz"`
	MaxMktSz string `json:"maxMktSz"`
	ListTime string `json:"listTime"`
	RuleType string `json:"ruleType"`
	Category string `json:"category"`

	// mid is the middle of the book, step the price distance between
	// levels and unit the typical level size.
	mid, step, unit, tick, lot, minSz decimal.Decimal
}

func newInstrument(id, tick, lot, minSz, mid, step, unit string) *Instrument {
	base, quote, _ := strings.Cut(id, "-")
	return &Instrument{
		InstID: id, InstType: "SPOT", BaseCcy: base, QuoteCcy: quote, State: "live",
		TickSz: tick, LotSz: lot, MinSz: minSz, MaxLmtSz: "9999999999", MaxMktSz: "1000000",
		ListTime: "1606468572000", RuleType: "normal", Category: "1",
		mid: decimal.RequireFromString(mid), step: decimal.RequireFromString(step), unit: decimal.RequireFromString(unit),
		tick: decimal.RequireFromString(tick), lot: decimal.RequireFromString(lot), minSz: decimal.RequireFromString(minSz),
	}
}

// defaultInstruments are the fake's markets: BTC-USDT with the steps of
// OKX's docs example (tick 0.1, lot 0.00000001, minSz 0.00001), the
// others constructed.
func defaultInstruments() []*Instrument {
	return []*Instrument{
		newInstrument("BTC-USDT", "0.1", "0.00000001", "0.00001", "60000", "0.5", "0.05"),
		newInstrument("ETH-USDT", "0.01", "0.000001", "0.0001", "3000", "0.05", "0.8"),
		newInstrument("ETH-BTC", "0.00001", "0.000001", "0.001", "0.05", "0.00001", "0.5"),
		newInstrument("SOL-USDT", "0.01", "0.0001", "0.01", "150", "0.01", "20"),
		newInstrument("XRP-USDT", "0.0001", "0.000001", "1", "0.6", "0.0001", "5000"),
		newInstrument("LTC-USDT", "0.01", "0.000001", "0.001", "80", "0.01", "10"),
	}
}

// Level is one price level of a book: price and size in base, as decimal
// strings.
type Level struct {
	Price string
	Size  string
}

// book holds both sides, best first, and the sequence id of its last
// change (the seqId of the books channel).
type book struct {
	bids, asks []bookLevel
	seq        int64
	changes    int
}

type bookLevel struct {
	price, size decimal.Decimal
}

// firstSeq is the seqId of a new book.
const firstSeq = 123456

// bookDepth is how many levels per side a generated book has.
const bookDepth = 400

// generateBook builds a deterministic book around the instrument's
// middle price: level i is (i+1) steps away, with a size of 1 to 5
// units.
func generateBook(in *Instrument) *book {
	b := &book{seq: firstSeq}
	for i := range bookDepth {
		off := in.step.Mul(decimal.NewFromInt(int64(i + 1)))
		sz := in.unit.Mul(decimal.NewFromInt(int64(1 + (i*7)%5)))
		b.bids = append(b.bids, bookLevel{price: in.mid.Sub(off), size: sz})
		b.asks = append(b.asks, bookLevel{price: in.mid.Add(off), size: sz})
	}
	return b
}

func (s *Server) handleInstruments(c *call) (any, *apiError) {
	switch c.query.Get("instType") {
	case "":
		return nil, emptyParam("instType")
	case "SPOT":
	default:
		return []any{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Instrument, 0, len(s.insts))
	for _, in := range s.insts {
		if id := c.query.Get("instId"); id == "" || id == in.InstID {
			out = append(out, in)
		}
	}
	slices.SortFunc(out, func(a, b *Instrument) int { return strings.Compare(a.InstID, b.InstID) })
	return out, nil
}

// instParam reads instId: 51001 when the instrument does not exist.
func (s *Server) instParam(v string) (*Instrument, *apiError) {
	if v == "" {
		return nil, emptyParam("instId")
	}
	s.mu.Lock()
	in := s.insts[v]
	s.mu.Unlock()
	if in == nil {
		return nil, fail(http.StatusOK, "51001", "Instrument ID, Instrument ID code or Spread ID doesn't exist.")
	}
	return in, nil
}

// levelRows writes levels as OKX's books do: [px, sz, "0", numOrders].
func levelRows(ls []bookLevel, n int) [][]string {
	out := [][]string{}
	for _, l := range ls[:min(len(ls), n)] {
		out = append(out, []string{l.price.String(), l.size.String(), "0", "1"})
	}
	return out
}

func (s *Server) handleBooks(c *call) (any, *apiError) {
	in, e := s.instParam(c.query.Get("instId"))
	if e != nil {
		return nil, e
	}
	sz := 1
	if v := c.query.Get("sz"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 400 {
			return nil, paramError("sz")
		}
		sz = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books[in.InstID]
	return []map[string]any{{"asks": levelRows(b.asks, sz), "bids": levelRows(b.bids, sz), "ts": ms(c.now)}}, nil
}

// bars are OKX's candlestick bars (OKX API v5 docs, "Get candlesticks"):
// their length (0 for months) and the offset of their buckets from UTC
// (HK-time bars start at 00:00 UTC+8).
var bars = map[string]struct {
	d      time.Duration
	months int
	hk     bool
}{
	"1m": {d: time.Minute}, "3m": {d: 3 * time.Minute}, "5m": {d: 5 * time.Minute}, "15m": {d: 15 * time.Minute},
	"30m": {d: 30 * time.Minute}, "1H": {d: time.Hour}, "2H": {d: 2 * time.Hour}, "4H": {d: 4 * time.Hour},
	"6H": {d: 6 * time.Hour, hk: true}, "12H": {d: 12 * time.Hour, hk: true}, "1D": {d: 24 * time.Hour, hk: true},
	"2D": {d: 48 * time.Hour, hk: true}, "3D": {d: 72 * time.Hour, hk: true}, "1W": {d: 7 * 24 * time.Hour, hk: true},
	"1M": {months: 1, hk: true}, "3M": {months: 3, hk: true},
	"6Hutc": {d: 6 * time.Hour}, "12Hutc": {d: 12 * time.Hour}, "1Dutc": {d: 24 * time.Hour}, "2Dutc": {d: 48 * time.Hour},
	"3Dutc": {d: 72 * time.Hour}, "1Wutc": {d: 7 * 24 * time.Hour}, "1Mutc": {months: 1}, "3Mutc": {months: 3},
}

// hk is Hong Kong time, where OKX's plain 6H and longer bars start.
var hk = time.FixedZone("UTC+8", 8*3600)

// barStart aligns t to the bar: minutes and hours to multiples of their
// length since the epoch, weeks to Monday 00:00, months to the first.
func barStart(name string, t time.Time) time.Time {
	b := bars[name]
	loc := time.UTC
	if b.hk {
		loc = hk
	}
	t = t.In(loc)
	switch {
	case b.months > 0:
		m := (int(t.Month()) - 1) / b.months * b.months
		return time.Date(t.Year(), time.Month(m+1), 1, 0, 0, 0, 0, loc)
	case b.d == 7*24*time.Hour:
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	case b.d >= 24*time.Hour:
		_, off := t.Zone()
		sec := t.Unix() + int64(off)
		d := int64(b.d / time.Second)
		return time.Unix(sec-sec%d-int64(off), 0).In(loc)
	}
	return t.Truncate(b.d)
}

// barPrev is the start of the bar before the one starting at start.
func barPrev(name string, start time.Time) time.Time {
	b := bars[name]
	if b.months > 0 {
		return start.AddDate(0, -b.months, 0)
	}
	if b.d == 7*24*time.Hour {
		return start.AddDate(0, 0, -7)
	}
	return start.Add(-b.d)
}

// candleRow is one bar: a pure function of instrument, bar and start,
// unless a trade of the live candle (ws.go) changed it.
func (s *Server) candleRow(in *Instrument, name string, start time.Time, current bool) []string {
	if lc := s.candles[in.InstID+"|"+name]; lc != nil && lc.start.Equal(start) {
		return lc.row(current)
	}
	return syntheticRow(in, name, start, current)
}

// syntheticRow is the deterministic bar of an instrument.
func syntheticRow(in *Instrument, name string, start time.Time, current bool) []string {
	h := sha256.Sum256([]byte(in.InstID + "|" + name + "|" + strconv.FormatInt(start.UnixMilli(), 10)))
	r := func(i int) decimal.Decimal { // in [-1, 1)
		return decimal.NewFromInt(int64(binary.BigEndian.Uint16(h[2*i:])) - 32768).Div(decimal.NewFromInt(32768))
	}
	pct := decimal.RequireFromString("0.01")
	o := in.mid.Add(in.mid.Mul(pct).Mul(r(0))).RoundDown(-in.tick.Exponent())
	cl := in.mid.Add(in.mid.Mul(pct).Mul(r(1))).RoundDown(-in.tick.Exponent())
	hi := decimal.Max(o, cl).Add(in.mid.Mul(pct).Mul(r(2).Abs()).Div(decimal.NewFromInt(2))).RoundDown(-in.tick.Exponent())
	lo := decimal.Min(o, cl).Sub(in.mid.Mul(pct).Mul(r(3).Abs()).Div(decimal.NewFromInt(2))).RoundDown(-in.tick.Exponent())
	vol := in.unit.Mul(decimal.NewFromInt(int64(10 + h[8]%90)))
	confirm := "1"
	if current {
		confirm = "0"
	}
	quote := vol.Mul(cl).String()
	return []string{ms(start), o.String(), hi.String(), lo.String(), cl.String(), vol.String(), quote, quote, confirm}
}

// candles answers a candles request: bars newest first, older than after
// and newer than before (ms), at most limit, and no further back than
// depth bars from now (0: no bound).
func (s *Server) candleAnswer(c *call, most, depth int) (any, *apiError) {
	in, e := s.instParam(c.query.Get("instId"))
	if e != nil {
		return nil, e
	}
	name := c.query.Get("bar")
	if name == "" {
		name = "1m"
	}
	if _, ok := bars[name]; !ok {
		return nil, paramError("bar")
	}
	limit, e := limitParam(c.query, 100, most)
	if e != nil {
		return nil, e
	}
	var after, before int64 = -1, -1
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"after", &after}, {"before", &before}} {
		if v := c.query.Get(p.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, paramError(p.name)
			}
			*p.dst = n
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := [][]string{}
	cur := barStart(name, c.now)
	start := cur
	for n := 0; len(out) < limit && (depth == 0 || n < depth) && n < 200000; n++ {
		t := start.UnixMilli()
		if before >= 0 && t <= before {
			break
		}
		if after < 0 || t < after {
			out = append(out, s.candleRow(in, name, start, start.Equal(cur)))
		}
		start = barPrev(name, start)
	}
	return out, nil
}

// recentBars is how far back GET /market/candles reaches (OKX API v5
// docs: "the latest 1,440 data entries").
const recentBars = 1440

func (s *Server) handleCandles(c *call) (any, *apiError) { return s.candleAnswer(c, 300, recentBars) }

func (s *Server) handleHistoryCandles(c *call) (any, *apiError) { return s.candleAnswer(c, 100, 0) }
