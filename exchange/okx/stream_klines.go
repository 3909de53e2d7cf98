package okx

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

// The kline stream: candle<bar> on /ws/v5/business (OKX API v5 docs,
// "Candlesticks channel",
// https://www.okx.com/docs-v5/en/#order-book-trading-market-data-ws-candlesticks-channel),
// pushes of [ts, o, h, l, c, vol, volCcy, volCcyQuote, confirm], confirm
// "1" once the bar has closed. A kline is emitted closed exactly once, by
// whichever comes first: a push with confirm 1, a later bar of the
// subscription, or klineCloseGrace after its interval ended. The
// intervals OKX has a UTC bar for are streamed as they are; 8h and 3d
// are built from the 4H and 1Dutc streams as RecentKlines builds them.
// The first value of every session is read from REST; after a reconnect
// the kline that ended meanwhile is emitted closed from it too.

// klineCloseGrace is how long after a kline's interval has ended, with no
// later bar pushed, the stream emits it closed.
const klineCloseGrace = 10 * time.Second

// klineTracker turns a subscription's bars into the stream's emissions:
// the current kline on every change, each kline closed once.
type klineTracker struct {
	cur    exgate.Kline
	have   bool
	closed bool // cur was emitted closed
}

// update takes one kline, complete (its interval closed) or not, and
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
func (k *klineTracker) closeAt() time.Time {
	if !k.have || k.closed {
		return time.Time{}
	}
	return time.UnixMilli(k.cur.CloseTime + 1).Add(klineCloseGrace)
}

// due closes the current kline when its time has come.
func (k *klineTracker) due(now time.Time) []exgate.KlineUpdate {
	at := k.closeAt()
	if at.IsZero() || now.Before(at) {
		return nil
	}
	k.closed = true
	return []exgate.KlineUpdate{{Kline: k.cur, Closed: true}}
}

// streamBar says which bar a kline stream subscribes to: iv's own, or the
// bar of the finer interval iv is built from (built).
func streamBar(iv exgate.Interval) (b bar, source exgate.Interval, built bool, err error) {
	plan, ok := klinePlans[iv]
	switch {
	case !ok:
		return bar{}, "", false, exgate.ParamError("interval", "unknown interval %q", iv)
	case plan.native.name != "":
		return plan.native, iv, false, nil
	}
	src := klinePlans[plan.source]
	if src.native.name == "" {
		return bar{}, "", false, exgate.ParamError("interval", "okx cannot stream %s klines", iv)
	}
	return src.native, plan.source, true, nil
}

// parseCandlePush reads a candle push's data: rows as in REST.
func parseCandlePush(raw []byte) ([]candle, error) {
	var rows [][]text
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("candle push: %w", err)
	}
	out := make([]candle, 0, len(rows))
	for _, r := range rows {
		c, err := parseCandle(r)
		if err != nil {
			return nil, fmt.Errorf("candle push: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// WatchKlines emits the current kline of sym and iv on every change and
// each kline once closed (see the comment at the top of this file).
func (e *Exchange) WatchKlines(ctx context.Context, cred exgate.Credential, sym exgate.Symbol, iv exgate.Interval, emit func(exgate.KlineUpdate)) error {
	b, source, built, err := streamBar(iv)
	if err != nil {
		return err
	}
	var k klineTracker
	// parts are a built interval's source bars of the current bucket.
	parts := map[int64]candle{}
	send := func(ks []exgate.Kline, lastComplete bool) {
		for i, kl := range ks {
			for _, u := range k.update(kl, i < len(ks)-1 || lastComplete) {
				emit(u)
			}
		}
	}
	return wsstream.Run(ctx, e.runConfig("klines "+sym.String()+" "+string(iv)), func(ctx context.Context, s *wsstream.Session) error {
		p, err := e.markets.Lookup(ctx, sym)
		if err != nil {
			return err
		}
		c, err := e.dial(ctx, "business")
		if err != nil {
			return err
		}
		defer c.close()
		arg := wsArg{Channel: "candle" + b.name, InstID: p.id}
		if err := c.send(ctx, "subscribe", arg); err != nil {
			return err
		}
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		arm := func() {
			timer.Stop()
			if at := k.closeAt(); !at.IsZero() {
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
				for _, u := range k.due(e.c.Now()) {
					emit(u)
				}
				arm()
				continue
			}
			if done, err := c.ack(m, "subscribe", arg); done {
				if err != nil {
					return err
				}
				// The state as it stands: the current kline, and after a
				// reconnect the one before it, complete.
				n := 1
				if k.have {
					n = 2
				}
				ks, err := e.RecentKlines(ctx, cred, exgate.KlineRequest{Symbol: sym, Interval: iv, Limit: n})
				if err != nil {
					return err
				}
				if built {
					if err := e.seedParts(ctx, p, iv, source, b, parts); err != nil {
						return err
					}
				}
				send(ks, false)
				s.Live()
				arm()
				continue
			}
			if m.Arg.Channel != arg.Channel || m.Arg.InstID != p.id || m.Event != "" {
				continue
			}
			cs, err := parseCandlePush(m.Data)
			if err != nil {
				return err
			}
			for _, cd := range cs {
				open := time.UnixMilli(cd.openMS).UTC()
				if !source.Start(open).Equal(open) {
					return fmt.Errorf("okx %s bar at %s is not aligned to UTC", b.name, open.Format(time.RFC3339))
				}
				if !built {
					send([]exgate.Kline{rest.Kline(iv, open, cd.open, cd.high, cd.low, cd.close, cd.baseVolume)}, cd.confirmed)
					continue
				}
				ks, err := buildFromParts(iv, source, parts, cd)
				if err != nil {
					return err
				}
				send(ks, false)
			}
			arm()
		}
	})
}

// seedParts reads the source bars of iv's current bucket from REST.
func (e *Exchange) seedParts(ctx context.Context, p *pair, iv, source exgate.Interval, b bar, parts map[int64]candle) error {
	start := iv.Start(e.c.serverNow())
	want := int(e.c.serverNow().Sub(start)/b.d) + 1
	cs, err := e.fetchCandles(ctx, p, b.name, want, start)
	if err != nil {
		return err
	}
	clear(parts)
	for _, c := range cs {
		parts[c.openMS] = c
	}
	return nil
}

// buildFromParts adds a pushed source bar to the bucket's parts and
// rebuilds the bucket's kline (and, when the bar starts a new bucket, the
// last one of the bucket before, complete).
func buildFromParts(iv, source exgate.Interval, parts map[int64]candle, c candle) ([]exgate.Kline, error) {
	bucket := func(ms int64) time.Time { return iv.Start(time.UnixMilli(ms)) }
	for open := range parts {
		if bucket(c.openMS).Before(bucket(open)) {
			return nil, nil // a bar of a bucket already left behind
		}
	}
	parts[c.openMS] = c
	cs := make([]candle, 0, len(parts))
	for _, x := range parts {
		cs = append(cs, x)
	}
	slices.SortFunc(cs, func(a, b candle) int { return cmp.Compare(a.openMS, b.openMS) })
	ks, err := aggregate(iv, source, cs)
	if err != nil {
		return nil, err
	}
	last := bucket(cs[len(cs)-1].openMS)
	for open := range parts {
		if bucket(open).Before(last) {
			delete(parts, open)
		}
	}
	return ks, nil
}
