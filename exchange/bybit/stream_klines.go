package bybit

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// The kline stream: kline.{interval}.{symbol}, pushed every 1 to 60 s with
// confirm=true once the candle has closed. Source:
// https://bybit-exchange.github.io/docs/v5/websocket/public/kline. The
// intervals Bybit streams (the REST ones but 8h) are streamed as they
// are, except 1w and 1M, which are built from 1d like 8h (from 4h) and 3d
// (from 1d), UTC aligned as RecentKlines builds them (aggregate), so that
// no week anchor of Bybit's is relied on. The current kline is read from
// REST once the subscription is live, so it is emitted at once. A kline is
// emitted on every change and, closed, exactly once: on confirm=true, or
// when a later kline of the subscription starts.

// klinePush is one candle of a kline push.
type klinePush struct {
	Start   text `json:"start"`
	Open    text `json:"open"`
	High    text `json:"high"`
	Low     text `json:"low"`
	Close   text `json:"close"`
	Volume  text `json:"volume"`
	Confirm bool `json:"confirm"`
}

// parseKlinePush reads a kline push's data: candles with plain decimals.
func parseKlinePush(data json.RawMessage) ([]candle, []bool, error) {
	var rows []klinePush
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, nil, fmt.Errorf("kline message: %w", err)
	}
	cs := make([]candle, 0, len(rows))
	confirms := make([]bool, 0, len(rows))
	for _, r := range rows {
		start, err := r.Start.millis()
		if err != nil || start <= 0 {
			return nil, nil, fmt.Errorf("kline message: bad start %q", r.Start)
		}
		c := candle{start: start, open: string(r.Open), high: string(r.High), low: string(r.Low), close: string(r.Close), volume: string(r.Volume)}
		for _, f := range []string{c.open, c.high, c.low, c.close, c.volume} {
			if !plain(f) {
				return nil, nil, fmt.Errorf("kline message: bad decimal %q", f)
			}
		}
		cs = append(cs, c)
		confirms = append(confirms, r.Confirm)
	}
	return cs, confirms, nil
}

// streamSource is the interval whose topic a kline stream of iv reads:
// iv itself when Bybit streams it and its buckets are certain (not 1w or
// 1M), else the finer interval it is built from.
func streamSource(iv exgate.Interval) (exgate.Interval, error) {
	p, ok := klinePlans[iv]
	switch {
	case !ok:
		return "", exgate.ParamError("interval", "unknown interval %q", iv)
	case p.native != "" && p.source == "":
		return iv, nil
	case p.source != "":
		return p.source, nil
	}
	return "", fmt.Errorf("bybit: no stream for %s", iv)
}

// klineBuilder keeps the source candles of the current bucket of iv and
// what was last emitted.
type klineBuilder struct {
	iv, source exgate.Interval
	bucket     time.Time
	candles    map[int64]candle
	last       exgate.Kline
	emitted    bool
	closed     bool
}

// add folds one source candle in and returns what to emit: the previous
// bucket closed when this one starts a later bucket, the bucket's kline
// when it changed, and the bucket closed when its last source candle is
// confirmed.
func (b *klineBuilder) add(c candle, confirm bool) ([]exgate.KlineUpdate, error) {
	t := time.UnixMilli(c.start).UTC()
	if !b.source.Start(t).Equal(t) {
		return nil, fmt.Errorf("%s kline at %s is not aligned to UTC", b.source, t.Format(time.RFC3339))
	}
	bucket := b.iv.Start(t)
	var out []exgate.KlineUpdate
	switch {
	case bucket.Before(b.bucket):
		return nil, nil // an old candle
	case bucket.After(b.bucket):
		if b.emitted && !b.closed {
			out = append(out, exgate.KlineUpdate{Kline: b.last, Closed: true})
		}
		b.bucket, b.candles, b.emitted, b.closed = bucket, map[int64]candle{}, false, false
	case b.closed:
		return nil, nil // the bucket was emitted closed
	}
	b.candles[c.start] = c
	starts := slices.Sorted(maps.Keys(b.candles))
	cs := make([]candle, 0, len(starts))
	for _, s := range starts {
		cs = append(cs, b.candles[s])
	}
	ks, err := aggregate(b.iv, b.source, cs)
	if err != nil || len(ks) != 1 {
		return nil, fmt.Errorf("kline of %s: %v", bucket.Format(time.RFC3339), err)
	}
	k := ks[0]
	complete := confirm && !b.source.Next(t).Before(b.iv.Next(bucket))
	if !b.emitted || k != b.last || complete {
		out = append(out, exgate.KlineUpdate{Kline: k, Closed: complete})
	}
	b.last, b.emitted, b.closed = k, true, complete
	return out, nil
}

// WatchKlines emits the pair's kline of iv (see the comment at the top of
// this file). An unknown pair ends it with UNKNOWN_SYMBOL.
func (e *Exchange) WatchKlines(ctx context.Context, _ exgate.Credential, sym exgate.Symbol, iv exgate.Interval, emit func(exgate.KlineUpdate)) error {
	p, err := e.markets.Lookup(ctx, sym)
	if err != nil {
		return err
	}
	source, err := streamSource(iv)
	if err != nil {
		return err
	}
	topic := "kline." + klinePlans[source].native + "." + p.id
	b := &klineBuilder{iv: iv, source: source, candles: map[int64]candle{}}
	send := func(us []exgate.KlineUpdate) {
		for _, u := range us {
			emit(u)
		}
	}
	return wsstream.Run(ctx, e.runConfig("klines "+p.id+" "+string(iv)), func(ctx context.Context, s *wsstream.Session) error {
		c, err := e.dial(ctx, e.stream.url)
		if err != nil {
			return err
		}
		defer c.close()
		var pending []wsMessage
		if err := c.request(ctx, "subscribe", []any{topic}, &pending); err != nil {
			return err
		}
		// The current bucket's source candles from REST: emitted at once,
		// and brought up to date after a reconnect.
		now := e.c.serverNow().UTC()
		n := 1
		for t := iv.Start(now); t.Before(now); t = source.Next(t) {
			n++
		}
		ks, _, err := e.nativeKlines(ctx, p, source, klinePlans[source].native, min(n, maxKlinesPerRequest))
		if err != nil {
			return err
		}
		for _, k := range ks {
			if k.OpenTime < iv.Start(now).UnixMilli() {
				continue // the bucket before
			}
			closed := !time.UnixMilli(k.CloseTime).After(now)
			us, err := b.add(candle{start: k.OpenTime, open: k.OpenPrice, high: k.HighPrice, low: k.LowPrice, close: k.ClosePrice, volume: k.Volume}, closed)
			if err != nil {
				return err
			}
			send(us)
		}
		s.Live()
		handle := func(m wsMessage) error {
			if m.Topic != topic {
				return nil
			}
			cs, confirms, err := parseKlinePush(m.Data)
			if err != nil {
				return err
			}
			for i, c := range cs {
				us, err := b.add(c, confirms[i])
				if err != nil {
					return err
				}
				send(us)
			}
			return nil
		}
		for _, m := range pending {
			if err := handle(m); err != nil {
				return err
			}
		}
		for {
			m, err := c.next(ctx)
			if err != nil {
				return err
			}
			if err := handle(m); err != nil {
				return err
			}
		}
	})
}
