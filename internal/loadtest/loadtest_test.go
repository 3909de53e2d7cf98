package loadtest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/exgate/exgate/internal/loadtest"
)

func TestRunCountsAndSigns(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-API-KEY") != "k" || !strings.Contains(r.URL.RawQuery, "&signature=") {
			w.WriteHeader(401)
			return
		}
		if n.Add(1)%10 == 0 {
			w.WriteHeader(503)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	res, err := loadtest.Run(t.Context(), loadtest.Config{
		Target:      loadtest.Target{URL: srv.URL + "/x?a=1", APIKey: "k", Secret: "s", ExchangeKey: "e"},
		Concurrency: 4,
		Requests:    100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 100 || res.Errors != 10 || res.Statuses[200] != 90 || res.Statuses[503] != 10 {
		t.Fatalf("result %+v", res)
	}
	if res.P50 <= 0 || res.P50 > res.P99 || res.P99 > res.Max {
		t.Fatalf("percentiles out of order: %+v", res)
	}
}

func TestSignedURL(t *testing.T) {
	// docs/contract.md 2.1: the empty parameter string's vector.
	got, err := loadtest.SignedURL("http://h/v1/wallet/account-balance", "ru8nVoVLNuNZ4qASWdmoBSsxzqZmXZFgnj2C5IWPZo0")
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://h/v1/wallet/account-balance?signature=49b1556d777c30a907611960e9300ad406f09cefdd820a453306d715c926c2cc"; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

func TestProxyMapsRoutes(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s?%s", r.URL.Path, r.URL.RawQuery)
	}))
	defer up.Close()
	px := httptest.NewServer(&loadtest.Proxy{Upstream: up.URL, Client: up.Client()})
	defer px.Close()
	tests := []struct{ path, want string }{
		{"/v1/market/recent-klines?asset1=btc&asset2=usdt&limit=500", "/api/v3/klines?symbol=BTCUSDT&interval=1m&limit=500"},
		{"/v1/market/order-book?asset1=ETH&asset2=BTC&limit=5", "/api/v3/depth?symbol=ETHBTC&limit=5"},
	}
	for _, tc := range tests {
		resp, err := http.Get(px.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != tc.want {
			t.Errorf("%s proxied to %s, want %s", tc.path, b, tc.want)
		}
	}
}

// TestSignedBody: the docs/contract.md 2.1 vector with a timestamp, signed as the
// gateway verifies a POST (members in order, strings unquoted).
func TestSignedBody(t *testing.T) {
	got := string(loadtest.SignedBody("ru8nVoVLNuNZ4qASWdmoBSsxzqZmXZFgnj2C5IWPZo0", []loadtest.Pair{
		{Name: "asset1", Value: "BTC"}, {Name: "asset2", Value: "ETH"}, {Name: "side", Value: "BUY"},
		{Name: "quantity", Value: "0.1"}, {Name: "quantityIn", Value: "ETH"},
	}, 1700000000000))
	// The signature of api/openapi.yaml's first market-order example.
	want := `{"asset1":"BTC","asset2":"ETH","side":"BUY","quantity":"0.1","quantityIn":"ETH","timestamp":1700000000000,` +
		`"signature":"2de3d537c569e22aa2da24ca9ff16d3027aac8d368eebf3bf76b86cc752fe6ea"}`
	if got != want {
		t.Errorf("SignedBody =\n%s\nwant\n%s", got, want)
	}
}
