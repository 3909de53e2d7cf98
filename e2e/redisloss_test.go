package e2e

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
)

// cuttableProxy forwards TCP connections to a target until it is cut:
// then it closes every open connection and refuses new ones, as a Redis
// that went away would look to exgate, until it is restored.
type cuttableProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
}

func newCuttableProxy(t *testing.T, target string) *cuttableProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttableProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	go p.serve()
	return p
}

func (p *cuttableProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(in) {
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil || !p.track(out) {
			in.Close()
			if out != nil {
				out.Close()
			}
			continue
		}
		go func() { _, _ = io.Copy(out, in); out.Close() }()
		go func() { _, _ = io.Copy(in, out); in.Close() }()
	}
}

// track records c unless the proxy is cut.
func (p *cuttableProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = true
	return true
}

func (p *cuttableProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

// TestRedisLost: an instance whose Redis goes away answers /readyz 503 and
// refuses requests that need shared state with 503 EXCHANGE_UNAVAILABLE,
// rather than serving them without rate limits or replay guard; when Redis
// is back it recovers by itself, without a restart.
func TestRedisLost(t *testing.T) {
	d := newDeployment(t)
	u, err := url.Parse(d.redisURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCuttableProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	d.redisURL = u.String()

	inst := d.startN(1)[0]
	key := d.createKey("redis-lost")
	d.addExchangeKey(key.APIKey, "paper", "sim", "--permissions", "read,trade")
	c := inst.client(key, "paper")
	if _, err := c.AccountBalance(t.Context()); err != nil {
		t.Fatalf("balance with Redis up: %v", err)
	}

	hc := &http.Client{Timeout: time.Second}
	waitReady := func(want int) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			status, err := inst.ready(hc)
			if err == nil && status == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz %d (%v); want %d", status, err, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	proxy.setCut(true)
	waitReady(http.StatusServiceUnavailable)
	_, err = c.AccountBalance(t.Context())
	ce, ok := errors.AsType[*client.Error](err)
	if !ok || ce.Status != http.StatusServiceUnavailable || ce.Code != string(exgate.CodeExchangeUnavailable) || ce.RetryAfter <= 0 {
		t.Fatalf("balance with Redis down: %v; want 503 EXCHANGE_UNAVAILABLE with Retry-After", err)
	}

	proxy.setCut(false)
	waitReady(http.StatusOK)
	if _, err := c.AccountBalance(t.Context()); err != nil {
		t.Fatalf("balance after Redis came back: %v", err)
	}
}
