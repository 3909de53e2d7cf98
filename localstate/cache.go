package localstate

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/exgate/exgate"
)

// maxCacheEntries bounds a Cache; when it is full of live entries, Set
// evicts an arbitrary eighth of them.
const maxCacheEntries = 10_000

// Cache holds byte values with a time to live.
type Cache struct {
	now func() time.Time

	mu      sync.Mutex
	entries table[[]byte]
}

// NewCache returns a cache on the clock now (time.Now when nil).
func NewCache(now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{now: now, entries: newTable[[]byte](maxCacheEntries)}
}

// Get returns a copy of key's value, or an error wrapping
// exgate.ErrNotFound when key is absent or expired.
func (c *Cache) Get(_ context.Context, key string) ([]byte, error) {
	now := c.now()
	c.mu.Lock()
	v, ok := c.entries.get(key, now)
	c.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("localstate: cache %q: %w", key, exgate.ErrNotFound)
	}
	return append([]byte(nil), v...), nil
}

// Set stores a copy of value under key for ttl; a ttl of 0 or less
// deletes key.
func (c *Cache) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	now := c.now()
	if ttl <= 0 {
		c.mu.Lock()
		delete(c.entries.entries, key)
		c.mu.Unlock()
		return nil
	}
	v := append([]byte(nil), value...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.entries.put(key, v, now.Add(ttl), now) {
		c.entries.evict()
		c.entries.put(key, v, now.Add(ttl), now)
	}
	return nil
}
