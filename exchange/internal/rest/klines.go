package rest

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// Kline is the normalized kline of iv that opens at open, with the
// exchange's strings: it closes a millisecond before the next one opens.
func Kline(iv exgate.Interval, open time.Time, o, h, l, c, v string) exgate.Kline {
	return exgate.Kline{
		OpenTime: open.UnixMilli(), OpenPrice: o, HighPrice: h, LowPrice: l, ClosePrice: c, Volume: v,
		CloseTime: iv.Next(open).UnixMilli() - 1,
	}
}

// Candle is one bar as an exchange sends it, for Aggregate: its open time
// and the exchange's strings (Volume in the base asset).
type Candle struct {
	Open                 time.Time
	OpenPrice, High, Low string
	Close, Volume        string
}

// Aggregate builds iv klines from ascending candles of the finer interval
// source, for an interval the exchange does not serve: open of the first,
// close of the last, highest high, lowest low, summed volume, each kline
// starting at iv.Start of its candles (UTC). A candle that does not open
// after the one before (pages that overlap) is skipped; one not aligned to
// source in UTC, or whose high, low or volume is not a decimal, is an
// error.
func Aggregate(iv, source exgate.Interval, cs []Candle) ([]exgate.Kline, error) {
	type bucket struct {
		start                  time.Time
		open, close, high, low string
		hi, lo, vol            decimal.Decimal
	}
	var bs []*bucket
	var last time.Time
	for i, c := range cs {
		if i > 0 && !c.Open.After(last) {
			continue // overlap between requests
		}
		last = c.Open
		t := c.Open.UTC()
		if !source.Start(t).Equal(t) {
			return nil, fmt.Errorf("%s kline at %s is not aligned to UTC", source, t.Format(time.RFC3339))
		}
		h, err1 := exgate.ParseDecimal(c.High)
		l, err2 := exgate.ParseDecimal(c.Low)
		v, err3 := exgate.ParseDecimal(c.Volume)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("kline at %s: bad decimal", t.Format(time.RFC3339))
		}
		start := iv.Start(t)
		if n := len(bs); n == 0 || !bs[n-1].start.Equal(start) {
			bs = append(bs, &bucket{start: start, open: c.OpenPrice, high: c.High, low: c.Low, hi: h, lo: l})
		}
		b := bs[len(bs)-1]
		b.close = c.Close
		if h.GreaterThan(b.hi) {
			b.hi, b.high = h, c.High
		}
		if l.LessThan(b.lo) {
			b.lo, b.low = l, c.Low
		}
		b.vol = b.vol.Add(v)
	}
	out := make([]exgate.Kline, 0, len(bs))
	for _, b := range bs {
		out = append(out, Kline(iv, b.start, b.open, b.high, b.low, b.close, b.vol.String()))
	}
	return out, nil
}
