// Package statetest is the conformance suite for the gateway's shared
// state: package localstate (in process) and package redis (shared by
// instances) each run it from their tests, so that a gateway behaves the
// same on either.
//
// Time-dependent checks run on a Clock the backend supplies with each
// instance: a FakeClock for a backend on an injected clock, a RealClock
// (short real waits, with a tolerance) for one on a server's clock.
package statetest

import (
	"context"
	"sync"
	"time"
)

// Nonces hands out strictly increasing numbers per key.
type Nonces interface {
	Next(ctx context.Context, key string, floor int64) (int64, error)
}

// ReplayGuard remembers keys until they expire. FirstUseBy records a key
// for an owner holding at most quota live keys; Claim does so binding the
// key to a route, and Release gives a claim back on that route only.
type ReplayGuard interface {
	FirstUse(ctx context.Context, key string, expiry time.Time) (bool, error)
	FirstUseBy(ctx context.Context, owner, key string, expiry time.Time, quota int) (bool, error)
	Claim(ctx context.Context, owner, key, route string, expiry time.Time, quota int) (first bool, boundTo string, err error)
	Release(ctx context.Context, owner, key, route string) error
}

// Cache holds byte values with a time to live.
type Cache interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// Clock is the time a backend instance runs on, as the suite sees it.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Advance lets at least d pass.
	Advance(d time.Duration)
	// Tolerance is how far a measured duration may be from the exact
	// value: 0 on a fake clock; on a real one, the time that passes
	// between calls plus the backend's rounding.
	Tolerance() time.Duration
}

// FakeClock is a Clock that moves only when advanced. It is safe for
// concurrent use.
type FakeClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewFakeClock returns a FakeClock set to a fixed instant on a whole
// second.
func NewFakeClock() *FakeClock { return &FakeClock{t: time.Unix(1_700_000_000, 0)} }

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the fake time forward by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Tolerance is 0: a fake clock is exact.
func (c *FakeClock) Tolerance() time.Duration { return 0 }

// RealClock is the system clock; Advance sleeps. Backends whose time is
// kept by a server (Redis) use it, so the suite keeps its real waits few
// and short.
type RealClock struct {
	// Slack is the tolerance on measured durations.
	Slack time.Duration
}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Advance sleeps d and one more millisecond, so that a server rounding to
// the millisecond has seen d pass too.
func (RealClock) Advance(d time.Duration) { time.Sleep(d + time.Millisecond) }

// Tolerance returns Slack.
func (c RealClock) Tolerance() time.Duration { return c.Slack }
