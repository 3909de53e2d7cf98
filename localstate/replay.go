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
	// owned holds the keys recorded with FirstUseBy, one table per owner
	// bounded by the owner's quota; ownedLen counts their entries, which
	// share the bound maxReplayKeys with seen.
	owned    map[string]*table[struct{}]
	ownedLen int
}

// NewReplayGuard returns a guard on the clock now (time.Now when nil).
func NewReplayGuard(now func() time.Time) *ReplayGuard {
	if now == nil {
		now = time.Now
	}
	return &ReplayGuard{now: now, seen: newTable[struct{}](maxReplayKeys), owned: map[string]*table[struct{}]{}}
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
func (g *ReplayGuard) FirstUseBy(_ context.Context, owner, key string, expiry time.Time, quota int) (bool, error) {
	if quota <= 0 {
		return false, fmt.Errorf("localstate: replay guard: quota %d for %q is not positive", quota, owner)
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.owned[owner]
	if t != nil {
		if _, ok := t.get(key, now); ok {
			return false, nil
		}
	}
	if !expiry.After(now) {
		return true, nil
	}
	if t == nil {
		if len(g.owned) >= maxReplayKeys {
			g.sweepOwners(now)
		}
		nt := newTable[struct{}](quota)
		t = &nt
		g.owned[owner] = t
	}
	t.cap = quota // the quota may change while the gateway runs
	if g.ownedLen+len(g.seen.entries) >= maxReplayKeys {
		g.sweepOwners(now)
		if g.ownedLen+len(g.seen.entries) >= maxReplayKeys {
			return false, fmt.Errorf("localstate: replay guard full (%d live keys)", maxReplayKeys)
		}
	}
	before := len(t.entries)
	ok := t.put(key, struct{}{}, expiry, now)
	g.ownedLen += len(t.entries) - before
	if !ok {
		return false, fmt.Errorf("localstate: replay guard: %q holds %d live keys: %w", owner, quota, exgate.ErrOverQuota)
	}
	return true, nil
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
