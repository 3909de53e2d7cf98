package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/internal/skipnotice"
	"github.com/exgate/exgate/statetest"
)

// realClock is the clock the suite measures Redis-backed state with: the
// slack covers the time that passes between calls and redis_rate's
// floating-point seconds.
var realClock = statetest.RealClock{Slack: 30 * time.Millisecond}

// urlEnv names the variable holding the test server's URL.
const urlEnv = "EXGATE_TEST_REDIS_URL"

func TestMain(m *testing.M) {
	if os.Getenv(urlEnv) == "" {
		skipnotice.Print("redis", "the Redis suite needs a server: "+urlEnv+"=redis://127.0.0.1:6379/0 go test ./redis/")
	}
	os.Exit(m.Run())
}

// testURL returns the Redis the tests use, or skips the test.
func testURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv(urlEnv)
	if u == "" {
		t.Skip("Redis tests need a server: set " + urlEnv + "=redis://127.0.0.1:6379/0")
	}
	return u
}

// openTest connects to the test Redis and returns the client and a fresh
// key prefix whose keys are deleted when the test ends.
func openTest(t *testing.T) (*Client, string) {
	t.Helper()
	c, err := Open(t.Context(), testURL(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	prefix := randomPrefix(t)
	t.Cleanup(func() {
		deleteKeys(t, c, prefix)
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c, prefix
}

func randomPrefix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "exgatetest:" + hex.EncodeToString(b) + ":"
}

// deleteKeys removes every key a test left under prefix.
func deleteKeys(t *testing.T, c *Client, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, pattern := range []string{prefix + "*", "rate:" + prefix + "*"} {
		iter := c.rdb.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			if err := c.rdb.Del(ctx, iter.Val()).Err(); err != nil {
				t.Errorf("delete %s: %v", iter.Val(), err)
			}
		}
		if err := iter.Err(); err != nil {
			t.Errorf("scan %s: %v", pattern, err)
		}
	}
}

func TestLimiter(t *testing.T) {
	testURL(t)
	statetest.RunLimiter(t, func(t *testing.T) (exgate.Limiter, statetest.Clock) {
		c, prefix := openTest(t)
		return NewLimiter(c, prefix), realClock
	})
}

func TestNonces(t *testing.T) {
	testURL(t)
	statetest.RunNonces(t, func(t *testing.T) statetest.Nonces {
		c, prefix := openTest(t)
		return NewNonces(c, prefix)
	})
}

func TestSlots(t *testing.T) {
	testURL(t)
	statetest.RunSlots(t, func(t *testing.T) (statetest.Slots, statetest.Clock) {
		c, prefix := openTest(t)
		return NewSlots(c, prefix), realClock
	})
}

func TestReplayGuard(t *testing.T) {
	testURL(t)
	statetest.RunReplayGuard(t, func(t *testing.T) (statetest.ReplayGuard, statetest.Clock) {
		c, prefix := openTest(t)
		return NewReplayGuard(c, prefix), realClock
	})
}

func TestCache(t *testing.T) {
	testURL(t)
	statetest.RunCache(t, func(t *testing.T) (statetest.Cache, statetest.Clock) {
		c, prefix := openTest(t)
		return NewCache(c, prefix), realClock
	})
}

// TestSharedByInstances checks that two clients (two gateway instances)
// with the same prefix share every facility, and that another prefix
// shares nothing.
func TestSharedByInstances(t *testing.T) {
	a, prefix := openTest(t)
	b, err := Open(t.Context(), testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	ctx := t.Context()

	t.Run("nonces", func(t *testing.T) {
		instances := []*Nonces{NewNonces(a, prefix), NewNonces(b, prefix)}
		var mu sync.Mutex
		seen := map[int64]bool{}
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Go(func() {
				v, err := instances[i%2].Next(ctx, "k", 0)
				if err != nil {
					t.Errorf("Next: %v", err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if seen[v] {
					t.Errorf("value %d handed out twice", v)
				}
				seen[v] = true
			})
		}
		wg.Wait()
		if v, err := NewNonces(a, prefix+"other:").Next(ctx, "k", 0); err != nil || v != 1 {
			t.Errorf("Next under another prefix = %d, %v; want 1, nil", v, err)
		}
	})

	t.Run("limiter", func(t *testing.T) {
		instances := []*Limiter{NewLimiter(a, prefix), NewLimiter(b, prefix)}
		limit := exgate.RateLimit{Rate: 1, Period: time.Hour, Burst: 10}
		var mu sync.Mutex
		admitted := 0
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Go(func() {
				wait, err := instances[i%2].Reserve(ctx, "k", 1, limit)
				if err != nil {
					t.Errorf("Reserve: %v", err)
					return
				}
				if wait == 0 {
					mu.Lock()
					admitted++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if admitted != 10 {
			t.Errorf("admitted %d across instances; want 10 (the burst)", admitted)
		}
		until := time.Now().Add(time.Minute).Truncate(time.Millisecond)
		if err := instances[0].Pause(ctx, "p", until); err != nil {
			t.Fatal(err)
		}
		if got, err := instances[1].PausedUntil(ctx, "p"); err != nil || !got.Equal(until) {
			t.Errorf("PausedUntil on the other instance = %v, %v; want %v", got, err, until)
		}
	})

	t.Run("replay guard", func(t *testing.T) {
		expiry := time.Now().Add(time.Minute)
		if ok, err := NewReplayGuard(a, prefix).FirstUse(ctx, "sig", expiry); err != nil || !ok {
			t.Fatalf("FirstUse = %v, %v; want true", ok, err)
		}
		if ok, err := NewReplayGuard(b, prefix).FirstUse(ctx, "sig", expiry); err != nil || ok {
			t.Fatalf("FirstUse on the other instance = %v, %v; want false", ok, err)
		}
	})

	t.Run("cache", func(t *testing.T) {
		if err := NewCache(a, prefix).Set(ctx, "k", []byte("v"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if v, err := NewCache(b, prefix).Get(ctx, "k"); err != nil || string(v) != "v" {
			t.Fatalf("Get on the other instance = %q, %v; want v", v, err)
		}
	})
}

// TestLostConnection checks that when Redis goes away every call fails
// with an error instead of answering as if nothing were limited.
func TestLostConnection(t *testing.T) {
	target := testURL(t)
	p := startProxy(t, target)
	c, err := Open(t.Context(), p.url)
	if err != nil {
		t.Fatalf("Open through the proxy: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	prefix := randomPrefix(t)
	t.Cleanup(func() {
		direct, err := Open(context.Background(), target)
		if err != nil {
			t.Errorf("Open for cleanup: %v", err)
			return
		}
		deleteKeys(t, direct, prefix)
		_ = direct.Close()
	})
	ctx := t.Context()
	limiter, nonces, guard, cache := NewLimiter(c, prefix), NewNonces(c, prefix), NewReplayGuard(c, prefix), NewCache(c, prefix)
	limit := exgate.RateLimit{Rate: 10, Period: time.Second, Burst: 10}
	if _, err := nonces.Next(ctx, "k", 0); err != nil {
		t.Fatalf("Next before the loss: %v", err)
	}
	if wait, err := limiter.Reserve(ctx, "k", 1, limit); err != nil || wait != 0 {
		t.Fatalf("Reserve before the loss = %v, %v", wait, err)
	}

	p.stop()
	calls := []struct {
		name string
		call func() error
	}{
		{"Ping", func() error { return c.Ping(ctx) }},
		{"Reserve", func() error {
			wait, err := limiter.Reserve(ctx, "k", 1, limit)
			if err == nil {
				t.Errorf("Reserve answered %v", wait)
			}
			return err
		}},
		{"Pause", func() error { return limiter.Pause(ctx, "k", time.Now().Add(time.Minute)) }},
		{"PausedUntil", func() error { _, err := limiter.PausedUntil(ctx, "k"); return err }},
		{"Next", func() error { _, err := nonces.Next(ctx, "k", 0); return err }},
		{"FirstUse", func() error {
			ok, err := guard.FirstUse(ctx, "sig", time.Now().Add(time.Minute))
			if ok {
				t.Error("FirstUse answered true")
			}
			return err
		}},
		{"Get", func() error {
			_, err := cache.Get(ctx, "k")
			if errors.Is(err, exgate.ErrNotFound) {
				t.Error("Get reported a miss, not the failure")
			}
			return err
		}},
		{"Set", func() error { return cache.Set(ctx, "k", []byte("v"), time.Minute) }},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil {
				t.Fatal("no error with Redis gone")
			}
			if !strings.HasPrefix(err.Error(), "redis: ") {
				t.Errorf("error %q does not say where it comes from", err)
			}
		})
	}
}

func TestOpenFails(t *testing.T) {
	// A server that hangs up on every connection.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_ = conn.Close()
		}
	}()
	// A port nothing listens on.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	_ = closed.Close()

	tests := []struct {
		name string
		url  string
	}{
		{"not a URL", "://nope"},
		{"wrong scheme", "http://127.0.0.1:6379/0"},
		{"bad database", "redis://127.0.0.1:6379/x"},
		{"connection refused", "redis://" + refused + "/0?max_retries=-1"},
		{"hangs up", "redis://" + ln.Addr().String() + "/0?max_retries=-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			c, err := Open(ctx, tc.url)
			if err == nil {
				_ = c.Close()
				t.Fatal("Open succeeded")
			}
		})
	}
}

// proxy forwards TCP connections to Redis until stopped, standing in for
// a network that fails.
type proxy struct {
	url string
	ln  net.Listener

	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := u.Host
	u.Host = ln.Addr().String()
	q := u.Query()
	q.Set("max_retries", "-1") // fail on the first lost connection
	u.RawQuery = q.Encode()
	p := &proxy{url: u.String(), ln: ln}
	t.Cleanup(p.stop)
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				_ = in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
		}
	}()
	return p
}

// stop closes the listener and every forwarded connection.
func (p *proxy) stop() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}
