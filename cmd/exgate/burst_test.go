package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/cmd/internal/gateway"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/internal/loadtest"
)

// TestBurstNeverFloodsBinance requests 5 times Binance's request-weight
// budget at once through the gateway: the exchange must never answer 429
// or 418 (which would get the operator's key banned), and the excess must
// get 503 with Retry-After. A request the gateway did send may still end
// in 504 when the machine is too slow to answer it in time (the race
// detector on shared cores); one it held back never does.
func TestBurstNeverFloodsBinance(t *testing.T) {
	const weightLimit = 60 // per minute, published in exchangeInfo
	fake := binancefake.New(binancefake.Options{WeightLimit: weightLimit})
	t.Cleanup(fake.Close)
	fake.AddAccount(binancefake.Account{APIKey: "bk", Secret: "bs", Balances: map[string]string{"USDT": "1000"}})
	var upstream, tooMany atomic.Int64
	target, _ := url.Parse(fake.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(r *http.Response) error {
		upstream.Add(1)
		if r.StatusCode == http.StatusTooManyRequests || r.StatusCode == http.StatusTeapot {
			tooMany.Add(1)
		}
		return nil
	}
	counting := httptest.NewServer(rp)
	t.Cleanup(counting.Close)

	const n = 5 * weightLimit / 2
	ctx := t.Context()
	cfg := &gateway.Config{DataDir: t.TempDir(), ExchangeSettings: binanceOnly(counting.URL),
		RequestTimeout: 5 * time.Second}
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	state, _ := gateway.OpenState(ctx, cfg)
	key, err := gateway.NewClientKey(ctx, st, "burst", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: key.APIKey, Name: "b", Exchange: "binance", Key: "bk", Secret: "bs"}); err != nil {
		t.Fatal(err)
	}
	g, err := gateway.Build(cfg, st, state, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	h := g.API
	gw := httptest.NewServer(h)
	t.Cleanup(gw.Close)

	// The market list loads before the burst (a klines request for a pair
	// Binance does not list: exchangeInfo, and no klines call), so that
	// the burst measures pacing alone. The request timeout leaves room for
	// the calls the budget admits to be answered on a machine made slow by
	// the race detector; pacing refuses the rest at once whatever it is.
	client := loadtest.NewClient(n)
	client.Timeout = 2 * time.Minute // the gateway answers each within its request timeout; this only bounds the test
	get := func(query string) (int, string) {
		u, _ := loadtest.SignedURL(gw.URL+"/v1/market/recent-klines?"+query, key.Secret)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		req.Header.Set("X-API-KEY", key.APIKey)
		req.Header.Set("X-API-EXCHANGE-KEY", "b")
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
		return resp.StatusCode, string(body)
	}
	if status, body := get("asset1=NOPE&asset2=USDT"); status != http.StatusBadRequest {
		t.Fatalf("warm-up: %d %s; want 400 for an unlisted pair", status, body)
	}

	// klines with limit <= 100 weigh 2: 5 times the budget is 300
	// weight, 150 requests, all at once. Distinct limits keep them from
	// being coalesced into fewer upstream calls.
	statuses := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			status, body := get("asset1=BTC&asset2=USDT&limit=" + strconv.Itoa(1+i%100))
			switch status {
			case http.StatusOK, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			default:
				t.Errorf("%d %s", status, body)
			}
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("%d requests: statuses %v; %d reached Binance", n, statuses, upstream.Load())
	if tooMany.Load() != 0 {
		t.Fatalf("Binance answered 429/418 %d times", tooMany.Load())
	}
	// Every 200 and every 504 is a call that reached Binance (the warm-up's
	// exchangeInfo reached it too): pacing never answers 504.
	if sent := statuses[http.StatusOK] + statuses[http.StatusGatewayTimeout]; int64(sent) > upstream.Load() {
		t.Errorf("statuses %v: %d answers of calls sent, but only %d calls reached Binance: pacing answered 504",
			statuses, sent, upstream.Load())
	}
	if statuses[http.StatusServiceUnavailable] == 0 || statuses[http.StatusOK] == 0 {
		t.Errorf("statuses %v: want some served and the excess refused", statuses)
	}
}
