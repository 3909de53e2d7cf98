package binance

import (
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/exchangetest"
)

// withStreams points the adapter's streams at the fake (whose REST URL
// BaseURL already is), with a short backoff so that reconnects take
// milliseconds.
func withStreams(opts *Options) {
	ws := "ws" + strings.TrimPrefix(opts.BaseURL, "http")
	opts.StreamURL, opts.WSAPIURL = ws, ws+"/ws-api/v3"
	opts.StreamBackoffMin, opts.StreamBackoffMax = 10*time.Millisecond, 100*time.Millisecond
}

// newStreamEnv is newEnv with the streams on the fake.
func newStreamEnv(t testing.TB, mods ...func(*Options)) *env {
	t.Helper()
	e := newEnv(t, append([]func(*Options){withStreams}, mods...)...)
	if e.fake.WSURL()+"/ws-api/v3" != e.ex.stream.apiURL {
		t.Fatalf("stream URLs %q, %q not the fake's %q", e.ex.stream.url, e.ex.stream.apiURL, e.fake.WSURL())
	}
	return e
}

func TestStreams(t *testing.T) {
	exchangetest.RunStreams(t, func(t *testing.T) exchangetest.StreamSetup {
		e := newStreamEnv(t)
		return exchangetest.StreamSetup{
			Setup: conformanceSetup(t, e),
			Fill: func(t *testing.T, id string) {
				if err := e.fake.FillOrder(testKey, id); err != nil {
					t.Fatalf("FillOrder(%s): %v", id, err)
				}
			},
			Pause:        func(*testing.T) func() { return e.fake.PauseStreams() },
			Book:         func(*testing.T) exgate.OrderBook { return e.fake.Book("BTCUSDT", exgate.MaxStreamDepth) },
			ChangeBook:   func(*testing.T) { e.fake.ChangeBook("BTCUSDT") },
			SkipSequence: func(*testing.T) { e.fake.SkipBookUpdate("BTCUSDT") },
			TradeKline:   func(_ *testing.T, next bool) { e.fake.TradeKline("BTCUSDT", next) },
		}
	})
}
