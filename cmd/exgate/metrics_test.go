package main

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/binance/binancefake"
)

// TestMetricsEndpoint runs `exgate serve --metrics-addr` against the
// Binance fake, sends traffic and scrapes /metrics: the named series
// carry the values the traffic implies, and no client key appears.
func TestMetricsEndpoint(t *testing.T) {
	f := binancefake.New(binancefake.Options{})
	t.Cleanup(f.Close)
	f.AddAccount(binancefake.Account{APIKey: "bkey", Secret: "bsecret", Balances: map[string]string{"USDT": "100000", "BTC": "2"}})
	env := map[string]string{"EXGATE_DATA_DIR": t.TempDir(), "EXGATE_BINANCE_URL": f.URL, "EXGATE_BINANCE_WS_URL": f.WSURL()}
	ck := createExchangeKey(t, env, "binance", "bkey", "bsecret")

	logs, errc := startServer(t, env, "serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--market-data-limit", "3/10s", "--market-data-max-age", "1m")
	api := waitFor(t, logs, regexp.MustCompile(`exgate listening.*addr=(\S+)`), errc)[1]
	maddr := waitFor(t, logs, regexp.MustCompile(`metrics listening.*addr=(\S+)`), errc)[1]
	c := client.New("http://"+api, ck.APIKey, ck.SecretKey, "main")
	ctx := t.Context()

	for range 2 { // the second is answered from the coalescing cache
		if _, err := c.OrderBook(ctx, client.OrderBookRequest{Asset1: "BTC", Asset2: "USDT", Limit: 5}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.RecentKlines(ctx, client.KlinesRequest{Asset1: "BTC", Asset2: "USDT", Interval: "1h", Limit: 5}); err != nil {
		t.Fatal(err)
	}
	// The fourth market-data request is over --market-data-limit.
	if _, err := c.OrderBook(ctx, client.OrderBookRequest{Asset1: "BTC", Asset2: "USDT", Limit: 5}); problemCodeOf(err) != "RATE_LIMITED" {
		t.Fatalf("fourth market-data request: %v, want RATE_LIMITED", err)
	}
	if _, err := c.PlaceMarketOrder(ctx, client.MarketOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY", Quantity: "100", QuantityIn: "asset2", ClientOrderID: "m-1"}); err != nil {
		t.Fatal(err)
	}
	// Two stream clients on one book: two subscribers, one upstream.
	for range 2 {
		s, err := c.Dial(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Subscribe(ctx, client.Subscription{Channel: "book", Asset1: "BTC", Asset2: "USDT", Depth: 5}); err != nil {
			t.Fatal(err)
		}
		for {
			msg, err := s.Read(ctx)
			if err != nil || msg.Op == "error" {
				t.Fatalf("stream: %+v %v", msg, err)
			}
			if msg.Book != nil {
				break
			}
		}
	}
	resp, err := http.Get("http://" + api + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics on the API's address: %d, want 404", resp.StatusCode)
	}

	got := scrapeMetrics(t, maddr)
	for _, s := range []string{
		`exgate_http_requests_total{exchange="binance",route="GET /v1/market/order-book",status="200"} 2`,
		`exgate_http_requests_total{exchange="binance",route="GET /v1/market/recent-klines",status="200"} 1`,
		`exgate_http_requests_total{exchange="none",route="GET /v1/market/order-book",status="429"} 1`,
		`exgate_http_requests_total{exchange="binance",route="POST /v1/order/market",status="200"} 1`,
		`exgate_http_requests_total{exchange="none",route="/",status="404"} 1`, // the catch-all pattern, never the raw path,
		`exgate_http_request_duration_seconds_count{exchange="binance",route="POST /v1/order/market",status="200"} 1`,
		`exgate_upstream_requests_total{class="market",exchange="binance",status="200"}`,
		`exgate_upstream_requests_total{class="orders",exchange="binance",status="200"} 1`,
		`exgate_upstream_weight_used{exchange="binance"}`,
		`exgate_upstream_weight_limit{exchange="binance"} 6000`,
		`exgate_upstream_clock_skew_seconds{exchange="binance"}`,
		`exgate_coalesce_hits_total{exchange="binance",kind="book"} 1`,
		`exgate_journal_intents_total{kind="order",state="submitting"} 1`,
		`exgate_journal_intents_total{kind="order",state="final"} 1`,
		`exgate_journal_reconcile_backlog 0`,
		// Every request carries a signed timestamp: two order books, the
		// klines, the order book refused with 429 (its claim kept for
		// a retry as itself), the order and the two stream handshakes.
		`exgate_replay_guard_signatures 7`,
		`exgate_stream_connections{kind="websocket"} 2`,
		`exgate_stream_connections{kind="in_process"} 0`,
		`exgate_stream_subscriptions{channel="book",exchange="binance"} 2`,
		`exgate_stream_upstreams{channel="book",exchange="binance"} 1`,
		`exgate_stream_slow_closes_total 0`,
		`exgate_audit_records_queued`, // the order's record may still be on its way
		`exgate_audit_records_dropped_total 0`,
		`exgate_audit_write_failures_total 0`,
	} {
		if !strings.Contains(got, "\n"+s) {
			t.Errorf("no %s in the scrape:\n%s", s, exgateLines(got))
		}
	}
	for _, secret := range []string{ck.APIKey, ck.SecretKey, "bkey", "m-1", "BTC"} {
		if strings.Contains(got, secret) {
			t.Errorf("the scrape holds %q: labels must be bounded", secret)
		}
	}
}

// TestMetricsOffByDefault: without --metrics-addr nothing listens for
// metrics; --metrics-addr equal to --addr is refused.
func TestMetricsOffByDefault(t *testing.T) {
	env := map[string]string{"EXGATE_DATA_DIR": t.TempDir()}
	logs, errc := startServer(t, env, "serve", "--addr", "127.0.0.1:0")
	api := waitFor(t, logs, regexp.MustCompile(`exgate listening.*addr=(\S+)`), errc)[1]
	if strings.Contains(logs.String(), "metrics listening") {
		t.Errorf("metrics listen by default:\n%s", logs)
	}
	resp, err := http.Get("http://" + api + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics on the API: %d, want 404", resp.StatusCode)
	}
	out, err := runCmd(t, map[string]string{"EXGATE_DATA_DIR": t.TempDir()}, "serve", "--addr", "127.0.0.1:18099", "--metrics-addr", "127.0.0.1:18099")
	if err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Errorf("metrics on the API's address: %v %s", err, out)
	}
}

func createExchangeKey(t *testing.T, env map[string]string, exchange, key, secret string) struct{ APIKey, SecretKey string } {
	t.Helper()
	out, err := runCmd(t, env, "keys", "create", "--label", exchange)
	if err != nil {
		t.Fatal(err, out)
	}
	var ck struct{ APIKey, SecretKey string }
	if err := json.Unmarshal([]byte(out), &ck); err != nil {
		t.Fatal(err, out)
	}
	if out, err := runCmd(t, env, "exchange-keys", "add", "--api-key", ck.APIKey, "--name", "main", "--exchange", exchange,
		"--key", key, "--secret", secret, "--permissions", "read,trade,withdraw"); err != nil {
		t.Fatal(err, out)
	}
	return ck
}

func scrapeMetrics(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// exgateLines is the scrape without the Go runtime's series.
func exgateLines(text string) string {
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "exgate_") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
