package gateio_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/exchangetest"
	"github.com/exgate/exgate/exchange/gateio"
	"github.com/exgate/exgate/exchange/gateio/gateiofake"
)

// streamOptions make the streams notice a dead connection within a
// second and never close a kline at the boundary during a test (the
// Klines case closes it with the next kline).
func streamOptions(o *gateio.Options) {
	o.WSPingInterval = 500 * time.Millisecond
	o.KlineCloseGrace = time.Minute
}

func TestStreams(t *testing.T) {
	exchangetest.RunStreams(t, func(t *testing.T) exchangetest.StreamSetup {
		e := newEnv(t, envOptions{adapter: streamOptions})
		const pair = "BTC_USDT"
		must := func(t *testing.T, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		return exchangetest.StreamSetup{
			Setup: conformanceSetup(e),
			Fill: func(t *testing.T, id string) {
				must(t, e.srv.FillOrder("gate-key", "t-"+id))
			},
			Pause: func(*testing.T) func() { return e.srv.PauseStreams() },
			Book: func(*testing.T) exgate.OrderBook {
				bids, asks := e.srv.BookLevels(pair, exgate.MaxStreamDepth)
				return exgate.OrderBook{Bids: levels(bids), Asks: levels(asks)}
			},
			ChangeBook:   func(t *testing.T) { must(t, e.srv.ChangeBook(pair)) },
			SkipSequence: func(t *testing.T) { must(t, e.srv.SkipBookUpdate(pair)) },
			TradeKline:   func(t *testing.T, next bool) { must(t, e.srv.TradeCandle(pair, "1m", next)) },
		}
	})
}

func levels(ls []gateiofake.Level) []exgate.Level {
	out := make([]exgate.Level, len(ls))
	for i, l := range ls {
		out[i] = exgate.Level{Price: l.Price, Quantity: l.Amount}
	}
	return out
}

// A wrong secret is refused by spot.orders (code 4): WatchOrders ends at
// once with EXCHANGE_AUTH_FAILED instead of reconnecting.
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
	if n := e.srv.StreamAuthFailures(); n != 1 {
		t.Errorf("the fake refused %d subscriptions, want 1 (no retry)", n)
	}
}
