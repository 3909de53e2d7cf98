package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// ReplayGuard remembers keys (such as request signatures) until they
// expire, shared by every instance using the same Redis and prefix. A key
// lives under prefix + "replay:" + key.
type ReplayGuard struct {
	rdb    *goredis.Client
	prefix string
	now    func() time.Time
}

// NewReplayGuard returns a guard over c whose keys start with prefix.
func NewReplayGuard(c *Client, prefix string) *ReplayGuard {
	return &ReplayGuard{rdb: c.rdb, prefix: prefix, now: time.Now}
}

// FirstUse records key until expiry (rounded up to the millisecond) and
// reports whether it was not already recorded. A key whose expiry has
// passed is not remembered, so it is a first use every time.
func (g *ReplayGuard) FirstUse(ctx context.Context, key string, expiry time.Time) (bool, error) {
	now := g.now()
	if !expiry.After(now) {
		return true, nil
	}
	err := g.rdb.SetArgs(ctx, g.prefix+"replay:"+key, "1", goredis.SetArgs{Mode: "NX", TTL: time.Duration(ttlMillis(expiry, now)) * time.Millisecond}).Err()
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, goredis.Nil): // NX: the key is already there
		return false, nil
	default:
		return false, fmt.Errorf("redis: replay guard %q: %w", key, err)
	}
}
