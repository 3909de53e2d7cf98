package binancefake

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func dialFake(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(t.Context(), url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func readJSON(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m
}

// TestStreamProtocol: the combined stream wraps events; an unknown stream
// is refused before the upgrade; the WebSocket API refuses a bad
// signature and an unknown key as Binance does.
func TestStreamProtocol(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	s.AddAccount(Account{APIKey: key, Secret: secret, Balances: map[string]string{"USDT": "1000"}})

	c := dialFake(t, s.WSURL()+"/stream?streams=btcusdt@depth@100ms")
	if err := s.WaitStreams(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	s.ChangeBook("BTCUSDT")
	m := readJSON(t, c)
	data, _ := m["data"].(map[string]any)
	if m["stream"] != "btcusdt@depth@100ms" || data["e"] != "depthUpdate" || data["U"] != float64(firstBookID+1) || data["u"] != float64(firstBookID+2) {
		t.Errorf("combined depth event %v", m)
	}

	resp, err := http.Get(s.URL + "/ws/nope@depth")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown stream: HTTP %d", resp.StatusCode)
	}

	api := dialFake(t, s.WSURL()+"/ws-api/v3")
	for _, tc := range []struct {
		params string
		status float64
		code   float64
	}{
		{`{"apiKey":"` + key + `","timestamp":` + nowMS(s) + `,"signature":"00"}`, 400, -1022},
		{`{"apiKey":"other","timestamp":` + nowMS(s) + `,"signature":"00"}`, 401, -2015},
		{`{"apiKey":"` + key + `","timestamp":1,"signature":"00"}`, 400, -1021},
	} {
		req := `{"id":"r","method":"userDataStream.subscribe.signature","params":` + tc.params + `}`
		if err := api.Write(t.Context(), websocket.MessageText, []byte(req)); err != nil {
			t.Fatal(err)
		}
		m := readJSON(t, api)
		e, _ := m["error"].(map[string]any)
		if m["id"] != "r" || m["status"] != tc.status || e["code"] != tc.code {
			t.Errorf("%s answered %v, want %v %v", strings.TrimSpace(tc.params), m, tc.status, tc.code)
		}
	}
}

func nowMS(s *Server) string {
	b, _ := json.Marshal(s.serverTime().UnixMilli())
	return string(b)
}
