package httpapi_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/stream"
)

// Issue 23: one read-only key opened 300 stream connections in 8 s. A
// client key holds at most 20 open (the default), counted across the
// instances that share the count (Redis in a deployment; one
// localstate.Slots here); the 21st handshake is 429 on every instance.
func TestStreamConnectionsPerKey(t *testing.T) {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	slots := localstate.NewSlots(func() time.Time { return start })
	g1 := newGateway(t, options{streams: &stream.Options{}, slots: slots})
	g2 := newGateway(t, options{streams: &stream.Options{}, slots: slots})
	headers := http.Header{"X-API-KEY": {g1.apiKey}, "X-API-EXCHANGE-KEY": {"demo"}}
	open := func(g *gateway) (*client, int) {
		t.Helper()
		c, resp, err := g.dial(g.streamQuery(""), headers)
		if err != nil {
			if resp == nil {
				t.Fatalf("dial: %v", err)
			}
			return nil, resp.StatusCode
		}
		return c, http.StatusSwitchingProtocols
	}
	var first *client
	for i := range 20 {
		g := g1
		if i >= 12 {
			g = g2
		}
		c, status := open(g)
		if status != http.StatusSwitchingProtocols {
			t.Fatalf("connection %d: %d; want it open", i+1, status)
		}
		if first == nil {
			first = c
		}
	}
	for _, g := range []*gateway{g1, g2} {
		if _, status := open(g); status != http.StatusTooManyRequests {
			t.Fatalf("21st connection: %d; want 429", status)
		}
	}
	// One closed frees its place (once its server side has ended).
	_ = first.ws.Close(websocket.StatusNormalClosure, "")
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, status := open(g2)
		if status == http.StatusSwitchingProtocols {
			_ = c
			break
		}
		if status != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("after one closed: %d", status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Issue 23: narrowing a key's IP allowlist did not close its open streams.
// An open stream is checked as requests are, within the caches' second.
func TestStreamClosedByAllowlistChange(t *testing.T) {
	g := newGateway(t, options{streams: &stream.Options{CheckInterval: 10 * time.Millisecond}, controls: true})
	c := g.connect()
	c.send(`{"op":"subscribe","channel":"orders"}`)
	if m := c.next(); m["op"] != "subscribed" {
		t.Fatalf("subscribe: %v", m)
	}
	g.setAllowedIPs("203.0.113.0/24") // not the test's 127.0.0.1
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.read(time.Until(deadline))
		if err == nil {
			continue // an order update or the like; wait for the close
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation {
			t.Fatalf("stream ended with %v; want a close 1008", err)
		}
		return
	}
}
