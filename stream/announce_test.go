package stream

import (
	"testing"

	"github.com/exgate/exgate"
)

// TestAnnounce: a halt reaches every client subscribed to the orders of
// the keys it selects, on any of their exchange keys, once each, and no
// other client.
func TestAnnounce(t *testing.T) {
	h := newHarness(t, nil)
	both := h.connect(t, testCred)
	second := exgate.Credential{ID: 2, ClientAPIKey: "k1", Name: "second", Exchange: "fake"}
	other := h.connect(t, exgate.Credential{ID: 3, ClientAPIKey: "k2", Name: "main", Exchange: "fake"})
	books := h.connect(t, testCred)
	both.send(`{"op":"subscribe","channel":"orders"}`)
	both.expectOp(t, OpSubscribed, "")
	h.ex.nextCall(t)
	other.send(`{"op":"subscribe","channel":"orders"}`)
	other.expectOp(t, OpSubscribed, "")
	h.ex.nextCall(t)
	books.send(`{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT"}`)
	books.expectOp(t, OpSubscribed, "")
	h.ex.nextCall(t)
	// A second connection of k1 on another exchange key.
	sec := h.connect(t, second)
	sec.send(`{"op":"subscribe","channel":"orders"}`)
	sec.expectOp(t, OpSubscribed, "")
	h.ex.nextCall(t)

	h.hub.Announce(func(k string) bool { return k == "k1" }, []byte(`{"op":"halted","reason":"runaway bot"}`))
	for _, c := range []*fakeWS{both, sec} {
		if m := c.next(t); m["op"] != "halted" || m["reason"] != "runaway bot" {
			t.Fatalf("message %v, want the halt", m)
		}
		c.none(t)
	}
	other.none(t)
	books.none(t)
	h.hub.Announce(func(string) bool { return true }, []byte(`{"op":"resumed"}`))
	for _, c := range []*fakeWS{both, sec, other} {
		if m := c.next(t); m["op"] != "resumed" {
			t.Fatalf("message %v, want the resume", m)
		}
	}
	books.none(t)
}
