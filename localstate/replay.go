package localstate

import (
	"context"
	"fmt"
	"sync"
	"time"
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
}

// NewReplayGuard returns a guard on the clock now (time.Now when nil).
func NewReplayGuard(now func() time.Time) *ReplayGuard {
	if now == nil {
		now = time.Now
	}
	return &ReplayGuard{now: now, seen: newTable[struct{}](maxReplayKeys)}
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
