package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/cmd/internal/gateway"
	"github.com/exgate/exgate/exchange"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/internal/loadtest"
)

// The gateway's own cost per request, without the load tool: a signed
// recent-klines request (limit 500) served in process by the gateway as
// `exgate serve` builds it (coalescing off, so every request is an upstream
// call, a parse and an encode) and, for comparison, by the bare proxy; the
// upstream is the fast fake Binance over loopback in both. Run them together:
//
//	go test -run '^$' -bench 'Klines$' -benchmem ./cmd/exgate
//
// docs/PERFORMANCE.md quotes the ratio.

const benchQuery = "asset1=BTC&asset2=USDT&interval=1m&limit=500"

// benchUpstream is the fake Binance of these benchmarks; its current kline
// changes on every call, as a live market's does.
func benchUpstream(tb testing.TB) *binancefake.Server {
	up := binancefake.New(binancefake.Options{WeightLimit: -1})
	tb.Cleanup(up.Close)
	up.AddAccount(binancefake.Account{APIKey: "benchkey", Secret: "benchsecret", Balances: map[string]string{"USDT": "1000"}})
	up.TickCurrentKline(true)
	return up
}

func serveBench(b *testing.B, h http.Handler, req func() *http.Request) {
	b.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req()) // warm: markets, connections, caches
	if w.Code != http.StatusOK {
		b.Fatalf("warm-up: %d %s", w.Code, w.Body)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req())
			if w.Code != http.StatusOK {
				b.Errorf("%d %s", w.Code, w.Body)
				return
			}
		}
	})
}

func BenchmarkGatewayKlines(b *testing.B) {
	up := benchUpstream(b)
	h, req := newKlinesGateway(b, up.URL, false)
	serveBench(b, h, req)
}

func BenchmarkProxyKlines(b *testing.B) {
	up := benchUpstream(b)
	p := &loadtest.Proxy{Upstream: up.URL, Client: loadtest.NewClient(8)}
	serveBench(b, p, func() *http.Request {
		return httptest.NewRequest(http.MethodGet, "http://proxy/v1/market/recent-klines?"+benchQuery, nil)
	})
}

// newKlinesGateway builds a gateway as `exgate serve` does, pointed at a
// fake Binance, and returns it with a maker of signed recent-klines
// requests (limit 500).
func newKlinesGateway(tb testing.TB, upstream string, coalescing bool) (http.Handler, func() *http.Request) {
	tb.Helper()
	cfg := &gateway.Config{DataDir: tb.TempDir(), ExchangeSettings: binanceOnly(upstream), LogFormat: "text", Coalesce: coalescing}
	st, err := gateway.OpenStore(tb.Context(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	state, err := gateway.OpenState(tb.Context(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	key, err := gateway.NewClientKey(tb.Context(), st, "bench", false)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := st.AddCredential(tb.Context(), exgate.Credential{ClientAPIKey: key.APIKey, Name: "bench", Exchange: "binance",
		Key: "benchkey", Secret: "benchsecret", Permissions: []exgate.Permission{exgate.PermissionRead}}); err != nil {
		tb.Fatal(err)
	}
	g, err := gateway.Build(cfg, st, state, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	h := g.API
	return h, func() *http.Request {
		target, err := loadtest.SignedURL("http://gateway/v1/market/recent-klines?"+benchQuery, key.Secret)
		if err != nil {
			tb.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Header.Set("X-API-KEY", key.APIKey)
		r.Header.Set("X-API-EXCHANGE-KEY", "bench")
		return r
	}
}

// TestKlinesJSONPaths checks that the gateway answers recent-klines the
// same with coalescing off (the adapter's JSON into the handler's buffer)
// and on (shared JSON), and the same as the klines form, on an upstream
// whose current kline changes on every call.
func TestKlinesJSONPaths(t *testing.T) {
	up := benchUpstream(t)
	var answers [][]exgate.Kline
	for _, coalescing := range []bool{false, true} {
		h, req := newKlinesGateway(t, up.URL, coalescing)
		for range 3 {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req())
			var ks []exgate.Kline
			if err := json.Unmarshal(w.Body.Bytes(), &ks); w.Code != http.StatusOK || err != nil || len(ks) != 500 {
				t.Fatalf("coalescing %v: %d, %d klines, %v: %.200s", coalescing, w.Code, len(ks), err, w.Body)
			}
			if again, _ := json.Marshal(ks); !bytes.Equal(again, bytes.TrimSpace(w.Body.Bytes())) {
				t.Fatalf("coalescing %v: the answer is not what encoding/json writes of its klines", coalescing)
			}
			answers = append(answers, ks)
		}
	}
	first := answers[0]
	for i, ks := range answers[1:] {
		if !reflect.DeepEqual(ks[:499], first[:499]) {
			t.Errorf("answer %d differs before the current kline", i+1)
		}
		if reflect.DeepEqual(ks[499], first[499]) {
			t.Errorf("answer %d: the current kline did not change", i+1)
		}
	}
}

// binanceOnly points Binance at url and the other REST exchanges at a
// closed port.
func binanceOnly(url string) map[string]exchange.Settings {
	return map[string]exchange.Settings{"binance": {"url": url}, "kraken": {"url": "http://127.0.0.1:1"}, "gateio": {"url": "http://127.0.0.1:1"}}
}
