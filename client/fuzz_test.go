package client

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzParseError feeds arbitrary answers to the problem decoder: it must
// never panic and must keep the HTTP status and the body.
func FuzzParseError(f *testing.F) {
	f.Add(400, `{"type":"t","title":"x","status":400,"detail":"d","code":"INVALID_PARAMETER","param":"q"}`, "")
	f.Add(504, `{"status":"PENDING","id":"o1","clientOrderId":"c1","code":"EXCHANGE_TIMEOUT"}`, "")
	f.Add(429, `{"status":[1,2]}`, "5")
	f.Add(503, `<html>`, "Wed, 21 Oct 2015 07:28:00 GMT")
	f.Add(500, `{"status":null,"code":7}`, "-1")
	f.Fuzz(func(t *testing.T, status int, body, retryAfter string) {
		h := http.Header{"Retry-After": {retryAfter}}
		e := parseError(status, h, []byte(body), time.Unix(1700000000, 0))
		if e.Status != status || string(e.Body) != body {
			t.Errorf("status %d body %q became %d %q", status, body, e.Status, e.Body)
		}
		if e.RetryAfter < 0 {
			t.Errorf("negative RetryAfter %v", e.RetryAfter)
		}
		_ = e.Error()
	})
}

// FuzzIsJSONNumber holds isJSONNumber to encoding/json's grammar.
func FuzzIsJSONNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "0.1", "1e-3", "1E+10", "01", ".5", "1.", "+1", "-", "", " 1", "1 ", "0x1", "1e", "NaN", `"1"`, "null", "[1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		want := json.Unmarshal([]byte(s), &v) == nil && strings.TrimSpace(s) == s
		if want {
			_, want = v.(float64)
		}
		if got := isJSONNumber(s); got != want && !(want == false && got && overflows(s)) {
			t.Errorf("isJSONNumber(%q) = %v, want %v", s, got, want)
		}
	})
}

// overflows reports whether s is a JSON number too large for float64, which
// encoding/json refuses to decode into any but the grammar allows.
func overflows(s string) bool {
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}

// FuzzParseMessage feeds arbitrary frames to the stream message decoder:
// it never panics, keeps the frame, and a message it accepts carries data
// for its channel or is an answer.
func FuzzParseMessage(f *testing.F) {
	f.Add(`{"op":"subscribed","channel":"book","asset1":"BTC","asset2":"USDT","depth":20}`)
	f.Add(`{"op":"error","code":"INVALID_PARAMETER","detail":"x","param":"depth"}`)
	f.Add(`{"channel":"book","asset1":"BTC","asset2":"USDT","data":{"bids":[{"price":"1","quantity":"2"}],"asks":[]},"time":1}`)
	f.Add(`{"channel":"klines","asset1":"BTC","asset2":"USDT","interval":"1m","data":{"openTime":1},"closed":true}`)
	f.Add(`{"channel":"orders","data":{"id":"o1","status":"PENDING","quantity":"0.1"}}`)
	f.Add(`{"channel":"orders","data":null}`)
	f.Fuzz(func(t *testing.T, frame string) {
		m, err := ParseMessage([]byte(frame))
		if string(m.Raw) != frame {
			t.Fatalf("raw %q, want %q", m.Raw, frame)
		}
		if err != nil || m.Op != "" {
			return
		}
		n := 0
		for _, set := range []bool{m.Order != nil, m.Book != nil, m.Kline != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("data message %q decoded to no or several records", frame)
		}
	})
}
