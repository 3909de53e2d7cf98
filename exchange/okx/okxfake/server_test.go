package okxfake

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// signed sends one request signed as OKX wants, after change has had its
// way with the headers, and returns the status and OKX's code.
func signed(t *testing.T, s *Server, method, path, body string, at time.Time, change func(h http.Header)) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	ts := at.UTC().Format("2006-01-02T15:04:05.000Z")
	req.Header.Set("OK-ACCESS-KEY", "k")
	req.Header.Set("OK-ACCESS-PASSPHRASE", "p")
	req.Header.Set("OK-ACCESS-TIMESTAMP", ts)
	req.Header.Set("OK-ACCESS-SIGN", Sign("s", ts, method, path, []byte(body)))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if change != nil {
		change(req.Header)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return resp.StatusCode, env.Code
}

// TestAuthentication: the fake refuses what OKX refuses, with OKX's codes
// (HTTP 401): missing headers, a malformed or stale timestamp, an unknown
// key, a wrong passphrase, a signature over anything but what was sent.
func TestAuthentication(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	if err := s.AddAccount(Account{APIKey: "k", Secret: "s", Passphrase: "p", Balances: map[string]string{"USDT": "1"}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	const path = "/api/v5/account/balance?ccy=USDT"
	tests := []struct {
		name   string
		at     time.Time
		change func(h http.Header)
		status int
		code   string
	}{
		{"signed", now, nil, 200, "0"},
		{"no key", now, func(h http.Header) { h.Del("OK-ACCESS-KEY") }, 401, "50103"},
		{"no passphrase", now, func(h http.Header) { h.Del("OK-ACCESS-PASSPHRASE") }, 401, "50104"},
		{"no sign", now, func(h http.Header) { h.Del("OK-ACCESS-SIGN") }, 401, "50106"},
		{"no timestamp", now, func(h http.Header) { h.Del("OK-ACCESS-TIMESTAMP") }, 401, "50107"},
		{"timestamp in seconds", now, func(h http.Header) { h.Set("OK-ACCESS-TIMESTAMP", "1704876947") }, 401, "50112"},
		{"stale", now.Add(-31 * time.Second), nil, 401, "50102"},
		{"ahead", now.Add(31 * time.Second), nil, 401, "50102"},
		{"within the window", now.Add(-20 * time.Second), nil, 200, "0"},
		{"unknown key", now, func(h http.Header) { h.Set("OK-ACCESS-KEY", "x") }, 401, "50111"},
		{"wrong passphrase", now, func(h http.Header) { h.Set("OK-ACCESS-PASSPHRASE", "q") }, 401, "50105"},
		{"wrong sign", now, func(h http.Header) { h.Set("OK-ACCESS-SIGN", Sign("s", "x", "GET", path, nil)) }, 401, "50113"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, code := signed(t, s, http.MethodGet, path, "", tc.at, tc.change)
			if status != tc.status || code != tc.code {
				t.Errorf("%d %s, want %d %s", status, code, tc.status, tc.code)
			}
		})
	}
	// The body is signed too.
	body := `{"instId":"BTC-USDT","tdMode":"cash","side":"buy","ordType":"market","sz":"100","clOrdId":"a1"}`
	status, code := signed(t, s, http.MethodPost, "/api/v5/trade/order", body, now, func(h http.Header) {
		h.Set("OK-ACCESS-SIGN", Sign("s", h.Get("OK-ACCESS-TIMESTAMP"), "POST", "/api/v5/trade/order", []byte(body+" ")))
	})
	if status != 401 || code != "50113" {
		t.Errorf("a signature over another body: %d %s", status, code)
	}
	// A refused order: code 1, the reason in sCode (51008), HTTP 200.
	if status, code := signed(t, s, http.MethodPost, "/api/v5/trade/order", body, now, nil); status != 200 || code != "1" {
		t.Errorf("an order the account cannot pay: %d %s, want 200 1", status, code)
	}
}

// TestRateLimit: past an endpoint's budget the fake answers 429 50011.
func TestRateLimit(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	got := 0
	for range 15 {
		resp, err := s.Client().Get(s.URL + "/api/v5/public/time")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 429 && strings.Contains(string(b), `"50011"`) {
			got++
		}
	}
	if got == 0 {
		t.Error("15 calls of GET /public/time (10 per 2 s) were never refused")
	}
}
