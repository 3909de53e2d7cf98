package gateiofake_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/exgate/exgate/exchange/gateio/gateiofake"
)

// TestStreamProtocol talks to the fake's /ws/v4/ as a client would.
func TestStreamProtocol(t *testing.T) {
	s := gateiofake.New(gateiofake.Options{})
	t.Cleanup(s.Close)
	if err := s.AddAccount(gateiofake.Account{APIKey: "k", Secret: "sec", Balances: map[string]string{"USDT": "1000"}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, s.WSURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	type answer struct {
		Channel string `json:"channel"`
		Event   string `json:"event"`
		Error   *struct {
			Code int `json:"code"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	roundTrip := func(req any) answer {
		t.Helper()
		var b []byte
		if raw, ok := req.(string); ok {
			b = []byte(raw)
		} else if b, err = json.Marshal(req); err != nil {
			t.Fatal(err)
		}
		if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		var a answer
		if err := wsjson.Read(ctx, ws, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	now := time.Now().Unix()
	sub := func(t int64, auth map[string]string) map[string]any {
		m := map[string]any{"time": t, "channel": "spot.orders", "event": "subscribe", "payload": []string{"!all"}}
		if auth != nil {
			m["auth"] = auth
		}
		return m
	}
	tests := []struct {
		name     string
		req      any
		channel  string
		wantCode int // 0: accepted
	}{
		{"ping", map[string]any{"time": now, "channel": "spot.ping"}, "spot.pong", 0},
		{"malformed JSON", `{"time":`, "", 1},
		{"unknown channel", map[string]any{"time": now, "channel": "spot.nothing", "event": "subscribe"}, "spot.nothing", 2},
		{"time out of the window", map[string]any{"time": now - 120, "channel": "spot.candlesticks", "event": "subscribe", "payload": []string{"1m", "BTC_USDT"}}, "spot.candlesticks", 2},
		{"orders unsigned", sub(now, nil), "spot.orders", 4},
		{"orders with a wrong signature", sub(now, map[string]string{"method": "api_key", "KEY": "k", "SIGN": gateiofake.WSSign("other", "spot.orders", "subscribe", now)}), "spot.orders", 4},
		{"orders with an unknown key", sub(now, map[string]string{"method": "api_key", "KEY": "x", "SIGN": gateiofake.WSSign("sec", "spot.orders", "subscribe", now)}), "spot.orders", 4},
		{"orders signed", sub(now, map[string]string{"method": "api_key", "KEY": "k", "SIGN": gateiofake.WSSign("sec", "spot.orders", "subscribe", now)}), "spot.orders", 0},
	}
	for _, tt := range tests {
		a := roundTrip(tt.req)
		code := 0
		if a.Error != nil {
			code = a.Error.Code
		}
		if code != tt.wantCode || a.Channel != tt.channel {
			t.Errorf("%s: answer on %q with code %d, want %q and %d", tt.name, a.Channel, code, tt.channel, tt.wantCode)
		}
	}
	if n := s.StreamAuthFailures(); n != 3 {
		t.Errorf("StreamAuthFailures = %d, want 3", n)
	}
	// An order placed on the site is pushed: event put, no status.
	id, err := s.PlaceOutside("k", gateiofake.OutsideOrder{Pair: "BTC_USDT", Side: "buy", Amount: "0.001", Price: "50000"})
	if err != nil {
		t.Fatal(err)
	}
	var push struct {
		Channel string           `json:"channel"`
		Event   string           `json:"event"`
		Result  []map[string]any `json:"result"`
	}
	if err := wsjson.Read(ctx, ws, &push); err != nil {
		t.Fatal(err)
	}
	if push.Channel != "spot.orders" || push.Event != "update" || len(push.Result) != 1 {
		t.Fatalf("push %+v", push)
	}
	o := push.Result[0]
	if _, hasStatus := o["status"]; hasStatus || o["id"] != id || o["event"] != "put" || o["finish_as"] != "open" {
		t.Errorf("pushed order %v, want id %s, event put, finish_as open and no status", o, id)
	}
}
