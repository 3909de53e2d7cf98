package kraken

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// klineCloseGrace is how long after its interval's end a kline is
// closed when no later kline has come: Kraken's update for a trade at the
// very end of an interval may arrive a moment after it.
const klineCloseGrace = 2 * time.Second

// klineCheckEvery bounds the wait between two checks of the close.
const klineCheckEvery = time.Second

// wsCandle is one data item of an ohlc message (docs.kraken.com "Candles
// (OHLC)", v2): numbers as JSON numbers, read exactly.
type wsCandle struct {
	Symbol        string       `json:"symbol"`
	Open          rest.Decimal `json:"open"`
	High          rest.Decimal `json:"high"`
	Low           rest.Decimal `json:"low"`
	Close         rest.Decimal `json:"close"`
	Vwap          rest.Decimal `json:"vwap"`
	Trades        uint64       `json:"trades"`
	Volume        rest.Decimal `json:"volume"`
	IntervalBegin string       `json:"interval_begin"`
	Interval      int          `json:"interval"`
	Timestamp     string       `json:"timestamp"`
}

// parseOHLCData parses the data of an ohlc message.
func parseOHLCData(raw json.RawMessage) ([]wsCandle, error) {
	var out []wsCandle
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("kraken ws: unparseable ohlc data: %w", err)
	}
	for _, c := range out {
		if !c.Open.Set || !c.High.Set || !c.Low.Set || !c.Close.Set || !c.Volume.Set {
			return nil, fmt.Errorf("kraken ws: an ohlc item of %q lacks a price or the volume", c.Symbol)
		}
		if _, err := wsTime(c.IntervalBegin); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// kline converts a candle of mk through the REST conversion (rowKline),
// prices written with the pair's price precision and the volume with its
// quantity precision.
func (c wsCandle) kline(mk *market, iv exgate.Interval) (exgate.Kline, error) {
	begin, err := wsTime(c.IntervalBegin)
	if err != nil {
		return exgate.Kline{}, err
	}
	pd := mk.pairDecimals
	return rowKline(ohlcRow{
		open: begin,
		o:    c.Open.StringFixed(pd), h: c.High.StringFixed(pd), l: c.Low.StringFixed(pd), c: c.Close.StringFixed(pd),
		volume: c.Volume.StringFixed(mk.lotDecimals),
		count:  c.Trades,
	}, iv), nil
}

func sameKline(a, b exgate.Kline) bool {
	na, nb := a.NumberOfTrades, b.NumberOfTrades
	return a.OpenTime == b.OpenTime && a.OpenPrice == b.OpenPrice && a.HighPrice == b.HighPrice && a.LowPrice == b.LowPrice &&
		a.ClosePrice == b.ClosePrice && a.Volume == b.Volume && (na == nil) == (nb == nil) && (na == nil || *na == *nb)
}

// klineTracker turns Kraken's candles, which carry no closed flag, into
// the klines channel: every change of the current kline, and each kline
// closed exactly once, when a later one arrives or klineCloseGrace after
// its end.
type klineTracker struct {
	emit       func(exgate.KlineUpdate)
	cur        exgate.Kline
	have       bool
	lastClosed int64 // OpenTime of the last closed kline; later updates of it are dropped
}

func (t *klineTracker) update(k exgate.Kline) {
	if k.OpenTime <= t.lastClosed || t.have && k.OpenTime < t.cur.OpenTime {
		return
	}
	if t.have && k.OpenTime > t.cur.OpenTime {
		t.close()
	}
	if t.have && sameKline(k, t.cur) {
		return
	}
	t.cur, t.have = k, true
	t.emit(exgate.KlineUpdate{Kline: k})
}

func (t *klineTracker) close() {
	if !t.have {
		return
	}
	t.emit(exgate.KlineUpdate{Kline: t.cur, Closed: true})
	t.lastClosed, t.have = t.cur.OpenTime, false
}

// closeAt is when the current kline closes without a later one.
func (t *klineTracker) closeAt() (time.Time, bool) {
	if !t.have {
		return time.Time{}, false
	}
	return time.UnixMilli(t.cur.CloseTime + 1).Add(klineCloseGrace), true
}

// WatchKlines streams Kraken's v2 ohlc channel for Kraken's own
// intervals (1m, 5m, 15m, 30m, 1h, 4h, 1d). The intervals the adapter
// builds from finer ones for RecentKlines (3m, 2h, 6h, 8h, 12h, 3d, 1M)
// and 1w (Kraken's weeks need not start on Monday) are refused with
// INVALID_PARAMETER.
func (e *Exchange) WatchKlines(ctx context.Context, _ exgate.Credential, sym exgate.Symbol, iv exgate.Interval, emit func(exgate.KlineUpdate)) error {
	src, ok := krakenIntervals[iv]
	if !ok {
		return exgate.ParamError("interval", "unknown interval %q", iv)
	}
	if !src.native || iv == exgate.Interval1w {
		return exgate.ParamError("interval", "Kraken streams klines of 1m, 5m, 15m, 30m, 1h, 4h and 1d only, not %s", iv)
	}
	t := &klineTracker{emit: emit, lastClosed: -1}
	return e.run(ctx, "ohlc "+sym.String()+" "+string(iv), func(ctx context.Context, s *wsstream.Session) error {
		mk, c, err := e.dialPair(ctx, sym)
		if err != nil {
			return err
		}
		defer c.close()
		name := mk.v2Symbol()
		params := subscribeParams{Channel: "ohlc", Symbol: []string{name}, Interval: src.minutes, Snapshot: ptr(true)}
		if err := c.send(ctx, subscribeRequest{Method: "subscribe", Params: params}); err != nil {
			return err
		}
		// The close is checked at least every klineCheckEvery, against
		// the adapter's clock (Options.Now).
		timer := time.NewTimer(klineCheckEvery)
		defer timer.Stop()
		arm := func() {
			d := klineCheckEvery
			if at, ok := t.closeAt(); ok {
				d = min(max(at.Sub(e.now()), 0), klineCheckEvery)
			}
			timer.Reset(d)
		}
		arm()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-timer.C:
				if at, ok := t.closeAt(); ok && !e.now().Before(at) {
					t.close()
				}
				arm()
			case r := <-c.in:
				if r.err != nil {
					return r.err
				}
				if r.msg.Channel != "ohlc" {
					continue
				}
				items, err := parseOHLCData(r.msg.Data)
				if err != nil {
					return err
				}
				var ks []exgate.Kline
				for _, it := range items {
					if it.Symbol != name || it.Interval != 0 && it.Interval != src.minutes {
						continue
					}
					k, err := it.kline(mk, iv)
					if err != nil {
						return err
					}
					ks = append(ks, k)
				}
				slices.SortStableFunc(ks, func(a, b exgate.Kline) int { return cmp.Compare(a.OpenTime, b.OpenTime) })
				if r.msg.Type == "snapshot" && len(ks) > 1 {
					ks = ks[len(ks)-1:] // the current kline; older ones are history
				}
				for _, k := range ks {
					t.update(k)
				}
				s.Live()
				arm()
			}
		}
	})
}
