package stream

import (
	"fmt"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/localstate"
)

// Issue 23: 3000 subscribe/unsubscribe frames made the gateway open 796
// upstream WebSockets. Within the grace period a topic's upstream
// subscription is reused: churn opens it once.
func TestChurnReusesUpstream(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.FrameRate, o.FrameBurst = 1000, 1000 })
	a := h.connect(t, testCred)
	const sub = `{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":5}`
	const unsub = `{"op":"unsubscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":5}`
	a.send(sub)
	a.expectOp(t, OpSubscribed, "")
	call := h.ex.nextCall(t)
	for range 200 {
		a.send(unsub)
		a.expectOp(t, OpUnsubscribed, "")
		a.send(sub)
		a.expectOp(t, OpSubscribed, "")
	}
	h.ex.noCall(t)
	if n := h.hub.Watches(); n != 1 {
		t.Fatalf("%d upstream subscriptions for one topic's churn; want 1", n)
	}
	if call.ctx.Err() != nil {
		t.Fatal("the upstream stopped while a subscriber is back")
	}
	// Left for good, it ends after the grace period.
	a.send(unsub)
	a.expectOp(t, OpUnsubscribed, "")
	h.passGrace(t)
	select {
	case <-call.ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("upstream kept past its grace period")
	}
}

// Issue 23: a client's frames are bounded per connection: over the budget a
// frame is refused with RATE_LIMITED, and a client that keeps on is closed.
func TestFrameBudget(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.FrameRate, o.FrameBurst = 1, 3 })
	a := h.connect(t, testCred)
	const bad = `{"op":"subscribe","channel":"nope"}`
	for range 3 {
		a.send(bad)
		a.expectOp(t, OpError, "INVALID_PARAMETER")
	}
	a.send(bad)
	a.expectOp(t, OpError, "RATE_LIMITED")
	h.clk.Add(time.Second) // one frame more
	a.send(bad)
	a.expectOp(t, OpError, "INVALID_PARAMETER")
	for range maxRefusedFrames + 1 {
		a.send(bad)
	}
	select {
	case <-a.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("a client flooding frames was not closed")
	}
	a.mu.Lock()
	code := a.code
	a.mu.Unlock()
	if code != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %d, want 1008", code)
	}
}

// Issue 23: upstream connections are opened within the exchange's
// published connection limit, in the limiter instances share: a start
// over the budget waits for it.
func TestUpstreamConnectsPaced(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		clk := o.Clock.(*fakeClock)
		o.Limiter = localstate.NewLimiter(clk.Now)
		o.ConnectLimit = func(exchange string) (exgate.RateLimit, bool) {
			return exgate.RateLimit{Rate: 1, Period: time.Minute, Burst: 2}, exchange == "fake"
		}
	})
	a := h.connect(t, testCred)
	for i, base := range []string{"BTC", "ETH", "SOL"} {
		a.send(fmt.Sprintf(`{"op":"subscribe","channel":"book","asset1":%q,"asset2":"USDT"}`, base))
		a.expectOp(t, OpSubscribed, "")
		if i < 2 {
			h.ex.nextCall(t)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for h.hub.Paced() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the third upstream start did not wait for the connection budget")
		}
		time.Sleep(time.Millisecond)
	}
	h.ex.noCall(t)
	h.clk.Add(time.Minute)
	h.ex.nextCall(t)
}
