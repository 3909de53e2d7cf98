package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/exgate/exgate"
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

func benchUpstream(b *testing.B) *binancefake.Server {
	up := binancefake.New(binancefake.Options{WeightLimit: -1})
	b.Cleanup(up.Close)
	up.AddAccount(binancefake.Account{APIKey: "benchkey", Secret: "benchsecret", Balances: map[string]string{"USDT": "1000"}})
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
	cfg := &config{dataDir: b.TempDir(), binanceURL: up.URL, krakenURL: "http://127.0.0.1:1", gateioURL: "http://127.0.0.1:1", logFormat: "text"}
	st, err := openStore(b.Context(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	state, err := openState(b.Context(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	key, err := createClientKey(b.Context(), st, "bench")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.AddCredential(b.Context(), exgate.Credential{ClientAPIKey: key.APIKey, Name: "bench", Exchange: exgate.ExchangeBinance,
		Key: "benchkey", Secret: "benchsecret", Permissions: []exgate.Permission{exgate.PermissionRead}}); err != nil {
		b.Fatal(err)
	}
	h, _, _ := buildGateway(cfg, st, state, slog.New(slog.DiscardHandler))
	target, err := loadtest.SignedURL("http://gateway/v1/market/recent-klines?"+benchQuery, key.Secret)
	if err != nil {
		b.Fatal(err)
	}
	serveBench(b, h, func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Header.Set("X-API-KEY", key.APIKey)
		r.Header.Set("X-API-EXCHANGE-KEY", "bench")
		return r
	})
}

func BenchmarkProxyKlines(b *testing.B) {
	up := benchUpstream(b)
	p := &loadtest.Proxy{Upstream: up.URL, Client: loadtest.NewClient(8)}
	serveBench(b, p, func() *http.Request {
		return httptest.NewRequest(http.MethodGet, "http://proxy/v1/market/recent-klines?"+benchQuery, nil)
	})
}
