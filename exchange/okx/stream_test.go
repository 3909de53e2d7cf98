package okx_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/exchangetest"
	"github.com/exgate/exgate/exchange/okx"
	"github.com/exgate/exgate/exchange/okx/okxfake"
)

// streamOptions make the streams notice a dead connection within a
// second.
func streamOptions(o *okx.Options) { o.WSPingInterval = 500 * time.Millisecond }

func TestStreams(t *testing.T) {
	exchangetest.RunStreams(t, func(t *testing.T) exchangetest.StreamSetup {
		e := newEnv(t, envOptions{adapter: streamOptions})
		const inst = "BTC-USDT"
		return exchangetest.StreamSetup{
			Setup: conformanceSetup(e),
			// The fake knows the order by its clOrdId: the client id the
			// suite gave, which OKX takes as it is.
			Fill:  func(t *testing.T, id string) { must(t, e.srv.FillOrder(apiKey, id)) },
			Pause: func(*testing.T) func() { return e.srv.PauseStreams() },
			Book: func(*testing.T) exgate.OrderBook {
				bids, asks := e.srv.BookLevels(inst, exgate.MaxStreamDepth)
				return exgate.OrderBook{Bids: levels(bids), Asks: levels(asks)}
			},
			ChangeBook:   func(t *testing.T) { must(t, e.srv.ChangeBook(inst)) },
			SkipSequence: func(t *testing.T) { must(t, e.srv.SkipBookUpdate(inst)) },
			BadChecksum:  func(*testing.T) { e.srv.CorruptNextBookUpdate(inst) },
			TradeKline:   func(t *testing.T, next bool) { must(t, e.srv.TradeCandle(inst, "1m", next)) },
		}
	})
}

func levels(ls []okxfake.Level) []exgate.Level {
	out := make([]exgate.Level, len(ls))
	for i, l := range ls {
		out[i] = exgate.Level{Price: l.Price, Quantity: l.Size}
	}
	return out
}

// A wrong passphrase is refused at the login (60024): WatchOrders ends at
// once with EXCHANGE_AUTH_FAILED instead of reconnecting.
func TestWatchOrdersLoginRefused(t *testing.T) {
	for name, change := range map[string]func(*exgate.Credential){
		"passphrase": func(c *exgate.Credential) { c.Passphrase = "wrong" },
		"secret":     func(c *exgate.Credential) { c.Secret = "wrong" },
		"key":        func(c *exgate.Credential) { c.Key = "nosuchkey" },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, envOptions{adapter: streamOptions})
			cred := e.cred
			change(&cred)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			err := e.ex.WatchOrders(ctx, cred, func(o exgate.Order) { t.Errorf("emitted %+v with a refused key", o) })
			if xe, ok := errors.AsType[*exgate.Error](err); !ok || xe.Code != exgate.CodeExchangeAuthFailed {
				t.Fatalf("WatchOrders = %v, want EXCHANGE_AUTH_FAILED", err)
			}
			if n := e.srv.StreamLoginFailures(); n != 1 {
				t.Errorf("the fake refused %d logins, want 1 (no retry)", n)
			}
		})
	}
}

// An interval OKX has no bar for (8h) streams from its source bar (4H):
// the first emission is the current 8h kline, and a trade in the current
// 4H bar changes it.
func TestStreamBuiltKlines(t *testing.T) {
	e := newEnv(t, envOptions{adapter: streamOptions})
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	var got []exgate.KlineUpdate
	changed := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() {
		done <- e.ex.WatchKlines(ctx, e.cred, btcUSDT, exgate.Interval8h, func(u exgate.KlineUpdate) {
			mu.Lock()
			got = append(got, u)
			mu.Unlock()
			changed <- struct{}{}
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("WatchKlines returned %v", err)
		}
	})
	wait := func(n int) []exgate.KlineUpdate {
		t.Helper()
		timeout := time.After(5 * time.Second)
		for {
			mu.Lock()
			if len(got) >= n {
				out := slices.Clone(got)
				mu.Unlock()
				return out
			}
			mu.Unlock()
			select {
			case <-changed:
			case <-timeout:
				t.Fatalf("%d emissions within 5s, want %d", len(got), n)
			}
		}
	}
	first := wait(1)[0]
	start := exgate.Interval8h.Start(time.Now())
	if first.Closed || first.Kline.OpenTime != start.UnixMilli() || first.Kline.CloseTime != start.Add(8*time.Hour).UnixMilli()-1 {
		t.Fatalf("first emission %+v; want the open 8h kline from %s", first, start)
	}
	must(t, e.srv.TradeCandle("BTC-USDT", "4H", false))
	second := wait(2)[1]
	if second.Kline.OpenTime != first.Kline.OpenTime || second.Kline == first.Kline {
		t.Errorf("after a trade: %+v; want the same 8h kline, changed (first %+v)", second, first)
	}
}
