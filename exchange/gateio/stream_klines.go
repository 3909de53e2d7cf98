package gateio

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// The kline stream: spot.candlesticks with payload [interval, pair]
// (Gate WS docs, "Candlesticks Channel"). Gate pushes the current
// candlestick about every 2 s; its window-closed flag `w` "may be
// missing", so a kline is emitted closed exactly once, by whichever comes
// first: w=true, a later candlestick (t) of the subscription, or
// KlineCloseGrace after its interval ended. Later pushes of a closed kline
// are ignored. The channel serves 10s 1m 5m 15m 30m 1h 4h 8h 1d 7d; the
// gateway's intervals Gate serves natively (klinePlans without a source:
// 1m 5m 15m 30m 1h 4h 8h 1d) are streamed as they are, and the built ones
// (3m 2h 6h 12h 3d 1w 1M) are built from the stream of their source
// interval as RecentKlines builds them (aggregate), UTC aligned.

// klineChannel is the candlestick channel.
const klineChannel = "spot.candlesticks"

// candleUpdate is one spot.candlesticks result.
type candleUpdate struct {
	name                   string // <interval>_<pair>
	openMS                 int64
	o, h, l, c, baseVolume string
	closed                 bool
}

// candleUpdateJSON is the wire shape: t open time (seconds, a string),
// o h l c prices, v the volume in quote, a the amount in base, n the
// subscription name, w the window-closed flag.
type candleUpdateJSON struct {
	T text   `json:"t"`
	O string `json:"o"`
	H string `json:"h"`
	L string `json:"l"`
	C string `json:"c"`
	A string `json:"a"`
	N string `json:"n"`
	W bool   `json:"w"`
}

// parseCandleUpdate reads the result of a spot.candlesticks update.
func parseCandleUpdate(raw []byte) (candleUpdate, error) {
	var j candleUpdateJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return candleUpdate{}, fmt.Errorf("candlestick update: %w", err)
	}
	sec, err := strconv.ParseInt(string(j.T), 10, 64)
	if err != nil || sec < 0 || sec > 1<<40 {
		return candleUpdate{}, fmt.Errorf("candlestick update: bad open time %q", j.T)
	}
	if j.N == "" {
		return candleUpdate{}, fmt.Errorf("candlestick update without a name")
	}
	u := candleUpdate{name: j.N, openMS: sec * 1000, closed: j.W}
	for _, f := range []struct {
		dst *string
		src string
	}{{&u.o, j.O}, {&u.h, j.H}, {&u.l, j.L}, {&u.c, j.C}, {&u.baseVolume, j.A}} {
		if *f.dst, err = plainDecimal(f.src); err != nil {
			return candleUpdate{}, fmt.Errorf("candlestick update: %w", err)
		}
	}
	return u, nil
}

// klineTracker turns a subscription's candlesticks into the stream's
// emissions: the current kline on every change, each kline closed once.
type klineTracker struct {
	cur    exgate.Kline
	have   bool
	closed bool // cur was emitted closed
}

// update takes one candlestick, complete (its window closed) or not, and
// returns what to emit.
func (k *klineTracker) update(kl exgate.Kline, complete bool) []exgate.KlineUpdate {
	var out []exgate.KlineUpdate
	if k.have {
		switch {
		case kl.OpenTime < k.cur.OpenTime:
			return nil // an older kline, pushed late
		case kl.OpenTime > k.cur.OpenTime && !k.closed:
			out = append(out, exgate.KlineUpdate{Kline: k.cur, Closed: true})
		case kl.OpenTime == k.cur.OpenTime && (k.closed || (kl == k.cur && !complete)):
			return nil // closed already, or unchanged
		}
	}
	k.cur, k.have, k.closed = kl, true, complete
	return append(out, exgate.KlineUpdate{Kline: kl, Closed: complete})
}

// closeAt is when the current kline is emitted closed if nothing later
// comes; zero when there is nothing to close.
func (k *klineTracker) closeAt(grace time.Duration) time.Time {
	if !k.have || k.closed {
		return time.Time{}
	}
	return time.UnixMilli(k.cur.CloseTime + 1).Add(grace)
}

// due closes the current kline when its time has come.
func (k *klineTracker) due(now time.Time, grace time.Duration) []exgate.KlineUpdate {
	at := k.closeAt(grace)
	if at.IsZero() || now.Before(at) {
		return nil
	}
	k.closed = true
	return []exgate.KlineUpdate{{Kline: k.cur, Closed: true}}
}

// klineSource is what a kline stream subscribes to: Gate's interval gi,
// which is the normalized interval source; built when iv is aggregated
// from source rather than streamed as it is.
type klineSource struct {
	gi     gateInterval
	source exgate.Interval
	built  bool
}

// streamInterval says how iv is streamed: natively, or built from the
// finer interval RecentKlines builds it from (klinePlans), which the
// channel serves. 1M is built from 1d because the channel has no 30d.
func streamInterval(iv exgate.Interval) (klineSource, error) {
	plan, ok := klinePlans[iv]
	switch {
	case !ok:
		return klineSource{}, exgate.ParamError("interval", "unknown interval %q", iv)
	case plan.source == "":
		return klineSource{gi: plan.native, source: iv}, nil
	}
	src := klinePlans[plan.source]
	if src.native.name == "" || src.source != "" {
		return klineSource{}, exgate.ParamError("interval", "gateio cannot stream %s klines", iv)
	}
	return klineSource{gi: src.native, source: plan.source, built: true}, nil
}

// klineBuilder keeps the source candlesticks of the current bucket of a
// built interval (and, for a moment, of the one before), so that every
// push of a source candlestick rebuilds the bucket's kline.
type klineBuilder struct {
	iv, source exgate.Interval
	parts      map[int64]candle // by open time, seconds
}

// set replaces the source candlesticks (a REST read).
func (b *klineBuilder) set(cs []candle) {
	b.parts = make(map[int64]candle, len(cs))
	for _, c := range cs {
		b.parts[c.openSec] = c
	}
}

// add takes one pushed source candlestick; false when it belongs to a
// bucket already left behind.
func (b *klineBuilder) add(c candle) bool {
	for open := range b.parts {
		if b.bucket(c.openSec).Before(b.bucket(open)) {
			return false
		}
	}
	b.parts[c.openSec] = c
	return true
}

func (b *klineBuilder) bucket(sec int64) time.Time { return b.iv.Start(time.Unix(sec, 0).UTC()) }

// klines aggregates the kept candlesticks into klines, ascending, and
// forgets those of every bucket but the last.
func (b *klineBuilder) klines() ([]exgate.Kline, error) {
	cs := make([]candle, 0, len(b.parts))
	for _, c := range b.parts {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(x, y candle) int { return cmp.Compare(x.openSec, y.openSec) })
	ks, err := aggregate(b.iv, b.source, cs)
	if err != nil || len(cs) == 0 {
		return ks, err
	}
	last := b.bucket(cs[len(cs)-1].openSec)
	for open := range b.parts {
		if b.bucket(open).Before(last) {
			delete(b.parts, open)
		}
	}
	return ks, nil
}

// WatchKlines emits the current kline of sym and iv on every change and
// each kline once closed (see the comment at the top of this file). The
// first value of every session is read from GET /spot/candlesticks; after
// a reconnect the kline that ended meanwhile is emitted closed from it too.
// A built interval subscribes to its source interval and rebuilds the
// current bucket from the source candlesticks on every push.
func (e *Exchange) WatchKlines(ctx context.Context, _ exgate.Credential, sym exgate.Symbol, iv exgate.Interval, emit func(exgate.KlineUpdate)) error {
	src, err := streamInterval(iv)
	if err != nil {
		return err
	}
	var k klineTracker
	b := klineBuilder{iv: iv, source: src.source}
	// send feeds klines to the tracker, all but the last complete.
	send := func(ks []exgate.Kline) {
		for i, kl := range ks {
			for _, u := range k.update(kl, i < len(ks)-1) {
				emit(u)
			}
		}
	}
	return wsstream.Run(ctx, e.runConfig("klines "+sym.String()+" "+string(iv)), func(ctx context.Context, s *wsstream.Session) error {
		p, err := e.markets.Lookup(ctx, sym)
		if err != nil {
			return err
		}
		name := src.gi.name + "_" + p.id
		c, err := e.dial(ctx)
		if err != nil {
			return err
		}
		defer c.close()
		if err := c.subscribe(ctx, klineChannel, []string{src.gi.name, p.id}, nil); err != nil {
			return err
		}
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		arm := func() {
			timer.Stop()
			if at := k.closeAt(e.stream.klineGrace); !at.IsZero() {
				timer.Reset(max(at.Sub(e.c.Now()), 0))
			}
		}
		arm()
		for {
			m, fired, err := c.next(ctx, timer.C)
			if err != nil {
				return err
			}
			if fired {
				for _, u := range k.due(e.c.Now(), e.stream.klineGrace) {
					emit(u)
				}
				arm()
				continue
			}
			if done, err := c.answered(m, klineChannel); done {
				if err != nil {
					return err
				}
				// The state as it stands: the current kline, and after a
				// reconnect the one before it, complete.
				ks, err := e.klinesNow(ctx, p, iv, src, &b, k.have)
				if err != nil {
					return err
				}
				send(ks)
				s.Live()
				arm()
				continue
			}
			if m.Channel != klineChannel || m.Event != "update" {
				continue
			}
			u, err := parseCandleUpdate(m.Result)
			if err != nil {
				return err
			}
			if u.name != name {
				continue
			}
			open := time.UnixMilli(u.openMS).UTC()
			if !src.source.Start(open).Equal(open) {
				return fmt.Errorf("gateio %s candlestick at %s is not aligned to UTC", name, open.Format(time.RFC3339))
			}
			if !src.built {
				for _, ku := range k.update(rest.Kline(iv, open, u.o, u.h, u.l, u.c, u.baseVolume), u.closed) {
					emit(ku)
				}
				arm()
				continue
			}
			if !b.add(candle{openSec: u.openMS / 1000, open: u.o, high: u.h, low: u.l, close: u.c, baseVolume: u.baseVolume}) {
				continue
			}
			ks, err := b.klines()
			if err != nil {
				return err
			}
			send(ks)
			arm()
		}
	})
}

// klinesNow reads the current kline from REST, and withPrevious the one
// before it: natively, or for a built interval from the source
// candlesticks since the start of the bucket (which then seed b).
func (e *Exchange) klinesNow(ctx context.Context, p *pair, iv exgate.Interval, src klineSource, b *klineBuilder, withPrevious bool) ([]exgate.Kline, error) {
	if !src.built {
		ks, _, err := e.nativeKlines(ctx, p, iv, src.gi, 2)
		if err != nil {
			return nil, err
		}
		if !withPrevious && len(ks) > 1 {
			ks = ks[len(ks)-1:]
		}
		return ks, nil
	}
	now := e.c.serverNow().UTC()
	from := iv.Start(now)
	if withPrevious {
		from = iv.Previous(from)
	}
	var ps rest.Params
	ps.Add("currency_pair", p.id)
	ps.Add("interval", src.gi.name)
	ps.Add("from", strconv.FormatInt(from.Unix(), 10))
	ps.Add("to", strconv.FormatInt(src.source.Start(now).Unix(), 10))
	cs, err := e.candles(ctx, ps)
	if err != nil {
		return nil, err
	}
	b.set(cs)
	ks, err := b.klines()
	if err != nil {
		return nil, badAnswer(epCandles, err)
	}
	return ks, nil
}
