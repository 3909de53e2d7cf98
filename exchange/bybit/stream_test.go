package bybit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/bybit"
	"github.com/exgate/exgate/exchange/exchangetest"
)

// streamOptions make the streams notice a dead connection within a
// second.
func streamOptions(o *bybit.Options) { o.WSPingInterval = 500 * time.Millisecond }

func TestStreams(t *testing.T) {
	exchangetest.RunStreams(t, func(t *testing.T) exchangetest.StreamSetup {
		e := newEnv(t, envOptions{adapter: streamOptions})
		const symbol = "BTCUSDT"
		return exchangetest.StreamSetup{
			Setup: conformanceSetup(e),
			Fill: func(t *testing.T, id string) {
				if err := e.srv.FillOrder("bybit-key", id); err != nil {
					t.Fatal(err)
				}
			},
			Pause: func(*testing.T) func() { return e.srv.PauseStreams() },
			Book: func(*testing.T) exgate.OrderBook {
				bids, asks := e.srv.BookLevels(symbol, exgate.MaxStreamDepth)
				return exgate.OrderBook{Bids: toBookLevels(bids), Asks: toBookLevels(asks)}
			},
			ChangeBook:   func(*testing.T) { e.srv.ChangeBook(symbol) },
			SkipSequence: func(*testing.T) { e.srv.SkipBookUpdate(symbol) },
			TradeKline:   func(_ *testing.T, next bool) { e.srv.TradeKline(symbol, next) },
		}
	})
}

func toBookLevels(rows [][]string) []exgate.Level {
	out := make([]exgate.Level, len(rows))
	for i, r := range rows {
		out[i] = exgate.Level{Price: r[0], Quantity: r[1]}
	}
	return out
}

// A wrong secret is refused by the private stream's auth: WatchOrders
// ends at once with EXCHANGE_AUTH_FAILED instead of reconnecting.
func TestWatchOrdersAuthRefused(t *testing.T) {
	e := newEnv(t, envOptions{adapter: streamOptions})
	cred := e.cred
	cred.Secret = "wrong-secret"
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := e.ex.WatchOrders(ctx, cred, func(o exgate.Order) { t.Errorf("emitted %+v with a refused key", o) })
	if xe, ok := errors.AsType[*exgate.Error](err); !ok || xe.Code != exgate.CodeExchangeAuthFailed {
		t.Fatalf("WatchOrders = %v, want EXCHANGE_AUTH_FAILED", err)
	}
}

// An unknown pair ends a book or kline stream at once.
func TestWatchUnknownSymbol(t *testing.T) {
	e := newEnv(t, envOptions{adapter: streamOptions})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := e.ex.WatchBook(ctx, e.cred, exgate.Symbol{Base: "NOPE", Quote: "USDT"}, func(exgate.OrderBook) {})
	if exgate.ErrorCode(err) != exgate.CodeUnknownSymbol {
		t.Errorf("WatchBook = %v", err)
	}
	err = e.ex.WatchKlines(ctx, e.cred, exgate.Symbol{Base: "USDT", Quote: "BTC"}, exgate.Interval1m, func(exgate.KlineUpdate) {})
	if exgate.ErrorCode(err) != exgate.CodeUnknownSymbol {
		t.Errorf("WatchKlines = %v", err)
	}
}

// A built interval (8h from 4h) streams its current bucket at once,
// aligned to UTC.
func TestWatchBuiltKlines(t *testing.T) {
	e := newEnv(t, envOptions{adapter: streamOptions})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan exgate.KlineUpdate, 16)
	go func() {
		_ = e.ex.WatchKlines(ctx, e.cred, btcUSDT, exgate.Interval8h, func(u exgate.KlineUpdate) { got <- u })
	}()
	select {
	case u := <-got:
		open := time.UnixMilli(u.Kline.OpenTime).UTC()
		if u.Closed || !exgate.Interval8h.Start(open).Equal(open) || u.Kline.CloseTime != u.Kline.OpenTime+8*3600*1000-1 {
			t.Errorf("first 8h emission %+v", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no 8h kline")
	}
}
