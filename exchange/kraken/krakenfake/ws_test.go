package krakenfake_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

// wsToken gets a WebSocket token with a signed GetWebSocketsToken.
func wsToken(t *testing.T, srv *krakenfake.Server) string {
	t.Helper()
	nonce := strconv.FormatInt(time.Now().UnixMicro(), 10)
	body := url.Values{"nonce": {nonce}}.Encode()
	path := "/0/private/GetWebSocketsToken"
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("API-Key", "key")
	req.Header.Set("API-Sign", good(path, nonce, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Error  []string `json:"error"`
		Result struct {
			Token   string `json:"token"`
			Expires int    `json:"expires"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || len(env.Error) > 0 || env.Result.Token == "" {
		t.Fatalf("GetWebSocketsToken: %v %v %+v", err, env.Error, env.Result)
	}
	return env.Result.Token
}

// wsDial connects to url; read returns the next message other than a
// heartbeat or status.
func wsDial(t *testing.T, u string) (send func(string), read func() map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	c, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	send = func(s string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	read = func() map[string]any {
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if m["channel"] != "heartbeat" && m["channel"] != "status" {
				return m
			}
		}
	}
	return send, read
}

// TestWSRequests: the fake checks subscriptions as Kraken does and
// answers each refused one with an error frame, the connection staying
// usable.
func TestWSRequests(t *testing.T) {
	srv := newServer(t)
	send, read := wsDial(t, srv.WSURL)
	for _, tc := range []struct{ req, wantErr string }{
		{`{"method":"subscribe",`, "Malformed request"},
		{`{"method":"subscribe","params":{"channel":"nope","symbol":["BTC/USD"]}}`, "EGeneral:Invalid arguments:channel"},
		{`{"method":"subscribe","params":{"channel":"book","symbol":["BTC/USD"],"depth":7}}`, "EGeneral:Invalid arguments:depth"},
		{`{"method":"subscribe","params":{"channel":"book","symbol":["XBT/USD"]}}`, "Currency pair not supported XBT/USD"},
		{`{"method":"subscribe","params":{"channel":"ohlc","symbol":["BTC/USD"],"interval":2}}`, "EGeneral:Invalid arguments:interval"},
		{`{"method":"subscribe","params":{"channel":"executions","token":"x"}}`, "ESession:Invalid session"},
	} {
		send(tc.req)
		if m := read(); m["success"] != false || m["error"] != tc.wantErr {
			t.Errorf("%s: %v, want error %q", tc.req, m, tc.wantErr)
		}
	}
	send(`{"method":"ping","req_id":7}`)
	if m := read(); m["method"] != "pong" || m["req_id"] != float64(7) {
		t.Errorf("ping: %v", m)
	}
	send(`{"method":"subscribe","params":{"channel":"book","symbol":["BTC/USD"],"depth":10},"req_id":8}`)
	if m := read(); m["success"] != true || m["req_id"] != float64(8) {
		t.Errorf("book subscribe: %v", m)
	}
	snap := read()
	data := snap["data"].([]any)[0].(map[string]any)
	if snap["type"] != "snapshot" || len(data["bids"].([]any)) != 10 || data["checksum"] == nil {
		t.Errorf("book snapshot: %v", snap)
	}
}

// TestWSExecutionsToken: executions need a token from GetWebSocketsToken,
// on the authenticated endpoint only; an order change is pushed.
func TestWSExecutionsToken(t *testing.T) {
	srv := newServer(t)
	tok := wsToken(t, srv)
	send, read := wsDial(t, srv.WSURL)
	send(`{"method":"subscribe","params":{"channel":"executions","token":"` + tok + `"}}`)
	if m := read(); m["error"] != "ESession:Invalid session" {
		t.Errorf("executions on the public endpoint: %v", m)
	}
	send, read = wsDial(t, srv.WSAuthURL)
	send(`{"method":"subscribe","params":{"channel":"executions","token":"` + tok + `","snap_orders":true}}`)
	if m := read(); m["success"] != true {
		t.Fatalf("executions subscribe: %v", m)
	}
	if m := read(); m["type"] != "snapshot" || len(m["data"].([]any)) != 0 {
		t.Errorf("executions snapshot: %v", m)
	}
	txid, err := srv.PlaceOutside("key", "XBTUSDT", "buy", "0.01", "20000")
	if err != nil {
		t.Fatal(err)
	}
	m := read()
	data, _ := m["data"].([]any)
	if m["type"] != "update" || len(data) != 2 || data[0].(map[string]any)["order_id"] != txid ||
		data[0].(map[string]any)["exec_type"] != "pending_new" || data[1].(map[string]any)["exec_type"] != "new" {
		t.Errorf("order placed: %v", m)
	}
	srv.RefuseTokens(true)
	bad := wsToken(t, srv)
	send(`{"method":"subscribe","params":{"channel":"executions","token":"` + bad + `"}}`)
	if m := read(); m["error"] != "ESession:Invalid session" {
		t.Errorf("refused token: %v", m)
	}
}
