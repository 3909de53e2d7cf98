package coalesce

import (
	"sync"
	"time"
)

// recent is a small map of answers with expiry times; it is cleared when it
// reaches its size, which keeps it bounded without bookkeeping on the hot
// path.
type recent struct {
	mu      sync.RWMutex
	max     int
	entries map[string]entry
}

type entry struct {
	v       *answer
	expires time.Time
}

func newRecent(max int) *recent {
	return &recent{max: max, entries: make(map[string]entry)}
}

func (r *recent) get(key string, now time.Time) (*answer, bool) {
	r.mu.RLock()
	e, ok := r.entries[key]
	r.mu.RUnlock()
	if !ok || !now.Before(e.expires) {
		return nil, false
	}
	return e.v, true
}

func (r *recent) put(key string, v *answer, expires time.Time) {
	r.mu.Lock()
	if len(r.entries) >= r.max {
		clear(r.entries)
	}
	r.entries[key] = entry{v: v, expires: expires}
	r.mu.Unlock()
}
