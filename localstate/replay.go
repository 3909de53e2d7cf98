package localstate

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/exgate/exgate"
)

// maxReplayKeys bounds the keys a ReplayGuard remembers at once. When that
// many are live, FirstUse fails: refusing a request is safer than
// forgetting a signature inside its window.
const maxReplayKeys = 1 << 20

// ReplayGuard remembers keys (such as request signatures) until they
// expire.
type ReplayGuard struct {
	now func() time.Time

	mu   sync.Mutex
	seen table[struct{}]
	// owned holds the keys recorded with Claim (and FirstUseBy), one
	// table per owner bounded by the owner's quota; ownedLen counts their
	// entries, which share the bound maxReplayKeys with seen.
	owned    map[string]*table[claim]
	ownedLen int
}

// claim is what the guard keeps of a claimed key: the route it is bound
// to, and whether it was released (its request refused before it was
// served, so that it may be claimed again on the same route).
type claim struct {
	route    string
	released bool
}

// NewReplayGuard returns a guard on the clock now (time.Now when nil).
func NewReplayGuard(now func() time.Time) *ReplayGuard {
	if now == nil {
		now = time.Now
	}
	return &ReplayGuard{now: now, seen: newTable[struct{}](maxReplayKeys), owned: map[string]*table[claim]{}}
}

// FirstUse records key until expiry and reports whether it was not
// already recorded. A key whose expiry has passed is not remembered, so
// it is a first use every time.
func (g *ReplayGuard) FirstUse(_ context.Context, key string, expiry time.Time) (bool, error) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.seen.get(key, now); ok {
		return false, nil
	}
	if !expiry.After(now) {
		return true, nil
	}
	if !g.seen.put(key, struct{}{}, expiry, now) {
		return false, fmt.Errorf("localstate: replay guard full (%d live keys)", g.seen.cap)
	}
	return true, nil
}

// FirstUseBy is FirstUse for a key that owner (a client key) records: an
// owner holding quota live keys gets an error wrapping exgate.ErrOverQuota
// and records nothing, so one owner cannot fill the guard for the others.
// A key already recorded is reported as a replay whatever the quota.
func (g *ReplayGuard) FirstUseBy(ctx context.Context, owner, key string, expiry time.Time, quota int) (bool, error) {
	first, _, err := g.Claim(ctx, owner, key, "", expiry, quota)
	return first, err
}

// Claim records key for owner, bound to route, until expiry, and reports
// whether this is its first use. A key already claimed is not a first use
// (boundTo names the route it was first claimed on), except a key
// released on the same route, which is claimed again. An owner holding
// quota live keys gets an error wrapping exgate.ErrOverQuota and records
// nothing. A key whose expiry has passed is not remembered.
func (g *ReplayGuard) Claim(_ context.Context, owner, key, route string, expiry time.Time, quota int) (first bool, boundTo string, err error) {
	if quota <= 0 {
		return false, "", fmt.Errorf("localstate: replay guard: quota %d for %q is not positive", quota, owner)
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.owned[owner]
	if t != nil {
		if c, ok := t.get(key, now); ok {
			if c.released && c.route == route {
				e := t.entries[key]
				e.value.released = false
				t.entries[key] = e
				return true, route, nil
			}
			return false, c.route, nil
		}
	}
	if !expiry.After(now) {
		return true, route, nil
	}
	if t == nil {
		if len(g.owned) >= maxReplayKeys {
			g.sweepOwners(now)
		}
		nt := newTable[claim](quota)
		t = &nt
		g.owned[owner] = t
	}
	t.cap = quota // the quota may change while the gateway runs
	if g.ownedLen+len(g.seen.entries) >= maxReplayKeys {
		g.sweepOwners(now)
		if g.ownedLen+len(g.seen.entries) >= maxReplayKeys {
			return false, "", fmt.Errorf("localstate: replay guard full (%d live keys)", maxReplayKeys)
		}
	}
	before := len(t.entries)
	ok := t.put(key, claim{route: route}, expiry, now)
	g.ownedLen += len(t.entries) - before
	if !ok {
		return false, "", fmt.Errorf("localstate: replay guard: %q holds %d live keys: %w", owner, quota, exgate.ErrOverQuota)
	}
	return true, route, nil
}

// Release gives back owner's claim of key on route, keeping its binding
// and expiry: the key may then be claimed again, on that route only. A key
// claimed on another route, or not claimed, is left as it is.
func (g *ReplayGuard) Release(_ context.Context, owner, key, route string) error {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.owned[owner]
	if t == nil {
		return nil
	}
	if c, ok := t.get(key, now); ok && c.route == route {
		e := t.entries[key]
		e.value.released = true
		t.entries[key] = e
	}
	return nil
}

// sweepOwners drops every owner's dead keys, and owners left with none.
func (g *ReplayGuard) sweepOwners(now time.Time) {
	g.ownedLen = 0
	for owner, t := range g.owned {
		t.sweep(now)
		if len(t.entries) == 0 {
			delete(g.owned, owner)
		}
		g.ownedLen += len(t.entries)
	}
}

// Len is the number of signatures held, live or not yet swept: the metrics
// gauge of the replay guard's size.
func (g *ReplayGuard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.seen.entries) + g.ownedLen
}
