package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/exgate/exgate"
	goredis "github.com/redis/go-redis/v9"
)

// Cache holds byte values with a time to live, shared by every instance
// using the same Redis and prefix. A key lives under prefix + "cache:" +
// key; Redis's own memory policy bounds the total.
type Cache struct {
	rdb    *goredis.Client
	prefix string
}

// NewCache returns a cache over c whose keys start with prefix.
func NewCache(c *Client, prefix string) *Cache {
	return &Cache{rdb: c.rdb, prefix: prefix}
}

// Get returns key's value, or an error wrapping exgate.ErrNotFound when
// key is absent or expired.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := c.rdb.Get(ctx, c.prefix+"cache:"+key).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, fmt.Errorf("redis: cache %q: %w", key, exgate.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("redis: cache %q: %w", key, err)
	}
	return v, nil
}

// Set stores value under key for ttl (rounded up to the millisecond); a
// ttl of 0 or less deletes key.
func (c *Cache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	k := c.prefix + "cache:" + key
	var err error
	if ttl <= 0 {
		err = c.rdb.Del(ctx, k).Err()
	} else {
		err = c.rdb.Set(ctx, k, value, (ttl+time.Millisecond-1)/time.Millisecond*time.Millisecond).Err()
	}
	if err != nil {
		return fmt.Errorf("redis: cache %q: %w", key, err)
	}
	return nil
}
