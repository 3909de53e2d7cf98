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

	outage(t, inst, proxy, c, "Redis")
}

// TestDatabaseLost: the same when PostgreSQL goes away: /readyz 503,
// requests 503 EXCHANGE_UNAVAILABLE (the keys cannot be read), and
// recovery without a restart.
func TestDatabaseLost(t *testing.T) {
	d := newDeployment(t)
	u, err := url.Parse(d.databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCuttableProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	// The instance reaches PostgreSQL through the proxy; the admin
	// commands, directly.
	d.extra = append(d.extra, "EXGATE_DATABASE_URL="+u.String())

	inst := d.startN(1)[0]
	key := d.createKey("database-lost")
	d.addExchangeKey(key.APIKey, "paper", "sim", "--permissions", "read,trade")
	c := inst.client(key, "paper")
	if _, err := c.AccountBalance(t.Context()); err != nil {
		t.Fatalf("balance with PostgreSQL up: %v", err)
	}
	outage(t, inst, proxy, c, "PostgreSQL")
}

// outage cuts proxy and checks that inst turns unready and refuses c's
// requests with 503 EXCHANGE_UNAVAILABLE, then restores it and checks that
// inst recovers.
func outage(t *testing.T, inst *instance, proxy *cuttableProxy, c *client.Client, what string) {
	t.Helper()
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
	// Past the gateway's 500 ms key cache, so that the keys are read
	// again: a process's cache has no clock the test can move.
	time.Sleep(600 * time.Millisecond)
	_, err := c.AccountBalance(t.Context())
	ce, ok := errors.AsType[*client.Error](err)
	if !ok || ce.Status != http.StatusServiceUnavailable || ce.Code != string(exgate.CodeExchangeUnavailable) || ce.RetryAfter <= 0 {
		t.Fatalf("balance with %s down: %v; want 503 EXCHANGE_UNAVAILABLE with Retry-After", what, err)
	}

	proxy.setCut(false)
	waitReady(http.StatusOK)
	if _, err := c.AccountBalance(t.Context()); err != nil {
		t.Fatalf("balance after %s came back: %v", what, err)
	}
}
