package bybitfake_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate/exchange/bybit/bybitfake"
)

// The vectors of ../testdata/signature_vectors.json, with the fake's
// clock at their timestamp: the fake accepts each one exactly as signed.
const (
	vecKey    = "bYb1tFakeKey7Q2xLp"
	vecSecret = "Qm8rT2vXw9KdL4pZs7YhN3cB6fJ1gE5aU0oR"
)

// answer is the envelope of an answer.
type answer struct {
	RetCode int             `json:"retCode"`
	RetMsg  string          `json:"retMsg"`
	Result  json.RawMessage `json:"result"`
}

func send(t *testing.T, srv *bybitfake.Server, method, path, query, body string, headers map[string]string) (int, answer) {
	t.Helper()
	u := srv.URL + path
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a answer
	_ = json.Unmarshal(b, &a)
	return resp.StatusCode, a
}

func signed(ts, recv, payload string) map[string]string {
	h := map[string]string{"X-BAPI-API-KEY": vecKey, "X-BAPI-TIMESTAMP": ts, "X-BAPI-SIGN": bybitfake.Sign(vecSecret, ts, vecKey, recv, payload)}
	if recv != "" {
		h["X-BAPI-RECV-WINDOW"] = recv
	}
	return h
}

func TestFakeChecksSignaturesAndTime(t *testing.T) {
	now := time.UnixMilli(1700000000000)
	srv := bybitfake.New(bybitfake.Options{Now: func() time.Time { return now }})
	t.Cleanup(srv.Close)
	if err := srv.AddAccount(bybitfake.Account{APIKey: vecKey, Secret: vecSecret, Unified: map[string]string{"USDT": "100"}}); err != nil {
		t.Fatal(err)
	}
	var vecs struct {
		Vectors []struct {
			Name, Method, Path, Timestamp, RecvWindow, Query, Body, Signature string
		} `json:"vectors"`
	}
	b, err := os.ReadFile("../testdata/signature_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vecs); err != nil {
		t.Fatal(err)
	}
	for _, v := range vecs.Vectors {
		if v.Path != "/v5/account/wallet-balance" && v.Path != "/v5/order/realtime" {
			continue // the other vectors' calls have effects or params of their own
		}
		h := map[string]string{"X-BAPI-API-KEY": vecKey, "X-BAPI-TIMESTAMP": v.Timestamp, "X-BAPI-RECV-WINDOW": v.RecvWindow, "X-BAPI-SIGN": v.Signature}
		if st, a := send(t, srv, v.Method, v.Path, v.Query, v.Body, h); st != 200 || a.RetCode != 0 {
			t.Errorf("vector %s: HTTP %d retCode %d %s", v.Name, st, a.RetCode, a.RetMsg)
		}
	}
	const path, query = "/v5/account/wallet-balance", "accountType=UNIFIED"
	ms := func(d time.Duration) string { return itoa(now.Add(d).UnixMilli()) }
	tests := []struct {
		name       string
		headers    map[string]string
		wantStatus int
		wantCode   int
	}{
		{"signed", signed(ms(0), "5000", query), 200, 0},
		{"no recv window: 5000", signed(ms(-4999*time.Millisecond), "", query), 200, 0},
		{"stale", signed(ms(-5001*time.Millisecond), "5000", query), 200, 10002},
		{"older but in a wider window", signed(ms(-9*time.Second), "10000", query), 200, 0},
		{"a second in the future", signed(ms(time.Second), "5000", query), 200, 10002},
		{"just under a second ahead", signed(ms(999*time.Millisecond), "5000", query), 200, 0},
		{"no key", map[string]string{"X-BAPI-TIMESTAMP": ms(0), "X-BAPI-SIGN": "ab"}, 200, 10001},
		{"unknown key", map[string]string{"X-BAPI-API-KEY": "nobody", "X-BAPI-TIMESTAMP": ms(0), "X-BAPI-SIGN": "ab"}, 401, 10003},
		{"wrong signature", map[string]string{"X-BAPI-API-KEY": vecKey, "X-BAPI-TIMESTAMP": ms(0), "X-BAPI-RECV-WINDOW": "5000",
			"X-BAPI-SIGN": bybitfake.Sign("other", ms(0), vecKey, "5000", query)}, 200, 10004},
		{"signed over another query", signed(ms(0), "5000", "accountType=FUND"), 200, 10004},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, a := send(t, srv, "GET", path, query, "", tc.headers)
			if st != tc.wantStatus || a.RetCode != tc.wantCode {
				t.Errorf("HTTP %d retCode %d (%s), want %d %d", st, a.RetCode, a.RetMsg, tc.wantStatus, tc.wantCode)
			}
		})
	}
	// A GET with a body is refused with HTTP 403.
	if st, _ := send(t, srv, "GET", path, query, "{}", signed(ms(0), "5000", query)); st != 403 {
		t.Errorf("GET with a body: HTTP %d", st)
	}
	// The body is signed exactly as sent, spaces included.
	body := `{"category": "spot", "symbol": "BTCUSDT", "orderLinkId": "nosuch"}`
	if st, a := send(t, srv, "POST", "/v5/order/cancel", "", body, signed(ms(0), "5000", body)); st != 200 || a.RetCode != 170213 {
		t.Errorf("cancel with spaces: HTTP %d retCode %d %s; want 170213 (signature accepted)", st, a.RetCode, a.RetMsg)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// The per-UID limit answers 10006 past the endpoint's budget in a rolling
// window, with the X-Bapi-Limit headers; the per-IP limit bans the address
// with HTTP 403.
func TestFakeLimits(t *testing.T) {
	now := time.UnixMilli(1700000000000)
	srv := bybitfake.New(bybitfake.Options{Now: func() time.Time { return now }, IPLimit: 30})
	t.Cleanup(srv.Close)
	if err := srv.AddAccount(bybitfake.Account{APIKey: vecKey, Secret: vecSecret}); err != nil {
		t.Fatal(err)
	}
	q := "accountType=FUND"
	for i := range 6 {
		_, a := send(t, srv, "GET", "/v5/asset/transfer/query-account-coins-balance", q, "", signed(itoa(now.UnixMilli()), "5000", q))
		want := 0
		if i == 5 {
			want = 10006 // 5 a second
		}
		if a.RetCode != want {
			t.Fatalf("call %d: retCode %d, want %d", i, a.RetCode, want)
		}
	}
	if srv.TooManyVisits() != 1 {
		t.Errorf("TooManyVisits %d", srv.TooManyVisits())
	}
	now = now.Add(time.Second)
	if _, a := send(t, srv, "GET", "/v5/asset/transfer/query-account-coins-balance", q, "", signed(itoa(now.UnixMilli()), "5000", q)); a.RetCode != 0 {
		t.Errorf("after the window: retCode %d", a.RetCode)
	}
	for range 30 {
		send(t, srv, "GET", "/v5/market/time", "", "", nil)
	}
	if st, _ := send(t, srv, "GET", "/v5/market/time", "", "", nil); st != 403 || srv.IPBans() == 0 {
		t.Errorf("past the IP limit: HTTP %d, bans %d", st, srv.IPBans())
	}
	now = now.Add(5 * time.Minute)
	if st, _ := send(t, srv, "GET", "/v5/market/time", "", "", nil); st != 403 {
		t.Errorf("5 minutes into the ban: HTTP %d", st)
	}
	now = now.Add(6 * time.Minute)
	if st, _ := send(t, srv, "GET", "/v5/market/time", "", "", nil); st != 200 {
		t.Errorf("after the ban: HTTP %d", st)
	}
}
