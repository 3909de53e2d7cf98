package gateio

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// The kline stream: spot.candlesticks with payload [interval, pair]
// (Gate WS docs, "Candlesticks Channel"). Gate pushes the current
// candlestick about every 2 s; its window-closed flag `w` "may be
// missing", so a kline is emitted closed exactly once, by whichever comes
// first: w=true, a later candlestick (t) of the subscription, or
// KlineCloseGrace after its interval ended. Later pushes of a closed kline
// are ignored. The channel serves 10s 1m 5m 15m 30m 1h 4h 8h 1d 7d; of the
// gateway's intervals, those Gate serves natively (klinePlans without a
// source: 1m 5m 15m 30m 1h 4h 8h 1d) are streamed and the built ones (3m
// 2h 6h 12h 3d 1w 1M) are refused with INVALID_PARAMETER.

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

// streamInterval is Gate's candlestick interval of iv when the channel
// streams it.
func streamInterval(iv exgate.Interval) (gateInterval, error) {
	plan, ok := klinePlans[iv]
	switch {
	case !ok:
		return gateInterval{}, exgate.ParamError("interval", "unknown interval %q", iv)
	case plan.native.name == "" || plan.source != "":
		return gateInterval{}, exgate.ParamError("interval",
			"gateio streams klines of 1m, 5m, 15m, 30m, 1h, 4h, 8h and 1d only; %s is built from %s and is not streamed", iv, plan.source)
	}
	return plan.native, nil
}

// WatchKlines emits the current kline of sym and iv on every change and
// each kline once closed (see the comment at the top of this file). The
// first value of every session is read from GET /spot/candlesticks; after
// a reconnect the kline that ended meanwhile is emitted closed from it too.
func (e *Exchange) WatchKlines(ctx context.Context, _ exgate.Credential, sym exgate.Symbol, iv exgate.Interval, emit func(exgate.KlineUpdate)) error {
	gi, err := streamInterval(iv)
	if err != nil {
		return err
	}
	var k klineTracker
	send := func(us []exgate.KlineUpdate) {
		for _, u := range us {
			emit(u)
		}
	}
	return wsstream.Run(ctx, e.runConfig("klines "+sym.String()+" "+string(iv)), func(ctx context.Context, s *wsstream.Session) error {
		p, err := e.markets.lookup(ctx, sym)
		if err != nil {
			return err
		}
		name := gi.name + "_" + p.id
		c, err := e.dial(ctx)
		if err != nil {
			return err
		}
		defer c.close()
		if err := c.subscribe(ctx, klineChannel, []string{gi.name, p.id}, nil); err != nil {
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
				send(k.due(e.c.Now(), e.stream.klineGrace))
				arm()
				continue
			}
			if done, err := c.answered(m, klineChannel); done {
				if err != nil {
					return err
				}
				// The state as it stands: the current kline, and after a
				// reconnect the one before it, complete.
				ks, _, err := e.nativeKlines(ctx, p, iv, gi, 2)
				if err != nil {
					return err
				}
				if !k.have && len(ks) > 1 {
					ks = ks[len(ks)-1:]
				}
				for i, kl := range ks {
					send(k.update(kl, i < len(ks)-1))
				}
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
			if !iv.Start(open).Equal(open) {
				return fmt.Errorf("gateio %s candlestick at %s is not aligned to UTC", name, open.Format(time.RFC3339))
			}
			send(k.update(kline(iv, open, u.o, u.h, u.l, u.c, u.baseVolume), u.closed))
			arm()
		}
	})
}
