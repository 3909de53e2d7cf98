package exchangetest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate/exchange/internal/fakehttp"
)

// faultHeader carries the id under which a FaultClient keeps the fault it
// chose for a request, for its Hook on the fake's side.
const faultHeader = "X-Exgate-Test-Fault"

// FaultClient is the client's side of fault injection on an exchange's
// fake, for tests whose adapter must give up on an answer held too long.
// It chooses each request's fault (a fake's Fault, such as
// binancefake.Fault), hands it to the fake through Hook (installed with
// the fake's SetFault), and gives the request a deadline only when the
// fault holds it longer than that: only an injected fault makes a call
// time out, never a busy machine, where a loopback answer can take longer
// than the short deadline such a test needs to stay fast.
type FaultClient struct {
	deadline time.Duration
	choose   atomic.Pointer[func(*http.Request) fakehttp.Fault]
	base     *http.Transport
	ids      atomic.Int64
	chosen   sync.Map // id -> fakehttp.Fault
	// sent counts the held requests written, arrived those the fake
	// received (WaitIdle).
	sent, arrived atomic.Int64
}

// NewFaultClient returns a FaultClient whose held requests time out
// after deadline.
func NewFaultClient(t testing.TB, deadline time.Duration) *FaultClient {
	c := &FaultClient{deadline: deadline, base: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(c.base.CloseIdleConnections)
	return c
}

// Client is the adapter's *http.Client. Its Timeout only keeps a hung test
// from waiting for ever.
func (c *FaultClient) Client() *http.Client { return &http.Client{Transport: c, Timeout: time.Minute} }

// Set makes choose decide the fault of every request from now on (nil:
// none).
func (c *FaultClient) Set(choose func(*http.Request) fakehttp.Fault) {
	if choose == nil {
		c.choose.Store(nil)
		return
	}
	c.choose.Store(&choose)
}

// held reports whether f holds a request past the deadline.
func (c *FaultClient) held(f fakehttp.Fault) bool { return f.Delay > c.deadline }

// RoundTrip implements http.RoundTripper.
func (c *FaultClient) RoundTrip(r *http.Request) (*http.Response, error) {
	var f fakehttp.Fault
	if choose := c.choose.Load(); choose != nil {
		f = (*choose)(r)
	}
	if f.Delay == 0 && f.Status == 0 && !f.Drop && !f.DropAfter {
		return c.base.RoundTrip(r)
	}
	id := strconv.FormatInt(c.ids.Add(1), 10)
	c.chosen.Store(id, f)
	if !c.held(f) {
		r = r.Clone(r.Context())
		r.Header.Set(faultHeader, id)
		return c.base.RoundTrip(r)
	}
	ctx, cancel := context.WithTimeout(r.Context(), c.deadline)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { c.sent.Add(1) }})
	r = r.Clone(ctx)
	r.Header.Set(faultHeader, id)
	resp, err := c.base.RoundTrip(r)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

// Hook is the fake's fault hook: the fault chosen for r.
func (c *FaultClient) Hook(r *http.Request) fakehttp.Fault {
	v, ok := c.chosen.LoadAndDelete(r.Header.Get(faultHeader))
	if !ok {
		return fakehttp.Fault{}
	}
	f := v.(fakehttp.Fault)
	if c.held(f) {
		c.arrived.Add(1)
	}
	return f
}

// WaitIdle waits, once every call through the client has returned, until
// the fake has received every held request that was written and handles
// none (busy is the fake's Busy): a request held past its client's
// deadline may still be processed, as an exchange would, and reading what
// the fake holds before it lands sees a state about to change. A request
// written but never received (its connection closed first) cannot land;
// after a minute the test goes on.
func (c *FaultClient) WaitIdle(t testing.TB, busy func() int) {
	t.Helper()
	for end := time.Now().Add(time.Minute); c.arrived.Load() < c.sent.Load() || busy() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Logf("the fake received %d of %d held requests and handles %d after a minute; going on", c.arrived.Load(), c.sent.Load(), busy())
			return
		}
	}
}

// cancelOnClose ends a request's context when its answer is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
