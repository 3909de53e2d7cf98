package binance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// klineEvent is one <symbol>@kline_<interval> message (web-socket-streams.md,
// "Kline/Candlestick Streams"). Members whose names differ only in case
// are all declared (encoding/json matches names case-insensitively).
type klineEvent struct {
	Type      string `json:"e"`
	EventTime int64  `json:"E"`
	Symbol    string `json:"s"`
	K         struct {
		OpenTime  json.Number     `json:"t"`
		CloseTime json.Number     `json:"T"`
		Symbol    string          `json:"s"`
		Interval  string          `json:"i"`
		Open      string          `json:"o"`
		Close     string          `json:"c"`
		High      string          `json:"h"`
		Low       string          `json:"l"`
		LastTrade json.RawMessage `json:"L"`
		Volume    string          `json:"v"`
		TakerBase json.RawMessage `json:"V"`
		Trades    json.Number     `json:"n"`
		Closed    bool            `json:"x"`
		Quote     json.RawMessage `json:"q"`
		TakerQ    json.RawMessage `json:"Q"`
		Ignore    json.RawMessage `json:"B"`
		FirstID   json.RawMessage `json:"f"`
	} `json:"k"`
}

// parseKlineEvent reads a kline message into the normalized kline of iv
// (through the same conversion as GET /api/v3/klines rows) and its
// closed flag k.x.
func parseKlineEvent(b []byte, iv exgate.Interval) (exgate.Kline, bool, error) {
	var ev klineEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		return exgate.Kline{}, false, fmt.Errorf("kline message: %w", err)
	}
	if ev.Type != "kline" {
		return exgate.Kline{}, false, fmt.Errorf("kline stream message of type %q: %s", ev.Type, rest.Truncate(b))
	}
	if want := klineIntervals[iv]; ev.K.Interval != want {
		return exgate.Kline{}, false, fmt.Errorf("kline of interval %q on the %s stream", ev.K.Interval, want)
	}
	r := rawKline{open: ev.K.OpenTime.String(), trades: ev.K.Trades.String(),
		values: [5]string{ev.K.Open, ev.K.High, ev.K.Low, ev.K.Close, ev.K.Volume}}
	var k exgate.Kline
	var trades uint64
	if err := newKlineRows(iv).convert(0, &r, -1, &k, &trades); err != nil {
		return exgate.Kline{}, false, err
	}
	return k, ev.K.Closed, nil
}

// klineState is what a klines stream has emitted: the last kline and
// whether it was emitted closed.
type klineState struct {
	last   exgate.Kline
	has    bool
	closed bool
}

// WatchKlines streams the klines of sym and iv from
// <symbol>@kline_<interval>. Binance streams every normalized interval
// (klineIntervals). Each session first reads the last two klines from
// GET /api/v3/klines, so the current kline is emitted at once and a
// kline that closed while the stream was down is emitted closed; then
// every message that changes the kline is emitted, and the one with
// k.x = true as the closed kline, once. Should a message of the next
// kline come before the closing one, the closed kline is read from the
// REST API.
func (e *Exchange) WatchKlines(ctx context.Context, cred exgate.Credential, sym exgate.Symbol, iv exgate.Interval, emit func(exgate.KlineUpdate)) error {
	name, ok := klineIntervals[iv]
	if !ok {
		return exgate.ParamError("interval", "unknown interval %q", iv)
	}
	st := &klineState{}
	return e.run(ctx, "klines "+sym.String()+" "+name, func(ctx context.Context, s *wsstream.Session) error {
		mk, err := e.markets.lookup(ctx, sym)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		conn, err := e.dial(ctx, e.stream.url+"/ws/"+strings.ToLower(mk.symbol)+"@kline_"+name)
		if err != nil {
			return err
		}
		frames := conn.frames(ctx, e.stream.idle)
		recent := func() ([]exgate.Kline, error) {
			return e.RecentKlines(ctx, cred, exgate.KlineRequest{Symbol: sym, Interval: iv, Limit: 2})
		}
		ks, err := recent()
		if err != nil {
			return err
		}
		if len(ks) > 0 {
			st.update(ks[len(ks)-1], false, ks, emit, e.logMissedClose(ctx, mk))
		}
		s.Live()
		for {
			b, err := next(ctx, frames)
			if err != nil {
				return err
			}
			k, closed, err := parseKlineEvent(b, iv)
			if err != nil {
				return err
			}
			var rows []exgate.Kline
			if st.has && !st.closed && k.OpenTime > st.last.OpenTime {
				// The closing message of the kline emitted last was
				// missed: its final state is on the REST API.
				if rows, err = recent(); err != nil {
					return err
				}
			}
			st.update(k, closed, rows, emit, e.logMissedClose(ctx, mk))
		}
	})
}

func (e *Exchange) logMissedClose(ctx context.Context, mk *market) func(open int64) {
	return func(open int64) {
		e.log.WarnContext(ctx, "binance kline closed unseen and not on the REST API; emitting its last state as closed", "symbol", mk.symbol, "openTime", open)
	}
}

// update emits what k (closed or not) changes. When k is a later kline
// than the last one emitted and that one was never emitted closed, it is
// emitted closed first, as rows (recent REST klines) have it, else as it
// was last seen (and missing is told).
func (st *klineState) update(k exgate.Kline, closed bool, rows []exgate.Kline, emit func(exgate.KlineUpdate), missing func(int64)) {
	switch {
	case !st.has:
	case k.OpenTime < st.last.OpenTime:
		return
	case k.OpenTime == st.last.OpenTime:
		if st.closed || (!closed && sameKline(k, st.last)) {
			return
		}
	case !st.closed:
		final, found := st.last, false
		for _, r := range rows {
			if r.OpenTime == st.last.OpenTime {
				final, found = r, true
			}
		}
		if !found {
			missing(st.last.OpenTime)
		}
		emit(exgate.KlineUpdate{Kline: final, Closed: true})
	}
	st.last, st.has, st.closed = k, true, closed
	emit(exgate.KlineUpdate{Kline: k, Closed: closed})
}

func sameKline(a, b exgate.Kline) bool {
	na, nb := a.NumberOfTrades, b.NumberOfTrades
	return a.OpenTime == b.OpenTime && a.CloseTime == b.CloseTime && a.OpenPrice == b.OpenPrice &&
		a.HighPrice == b.HighPrice && a.LowPrice == b.LowPrice && a.ClosePrice == b.ClosePrice && a.Volume == b.Volume &&
		(na == nil) == (nb == nil) && (na == nil || *na == *nb)
}
