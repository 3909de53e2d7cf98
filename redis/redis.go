// Package redis keeps the gateway's shared state in Redis, so that several
// gateway instances share rate limits (GCRA, with pauses), exchange
// nonces, the replay guard and a cache. It has the same methods as package
// localstate, the single-instance default; package statetest holds both
// to the same behaviour.
//
// Every key is namespaced by the prefix given to the constructors. Errors
// from Redis, a lost connection included, are returned wrapped and never
// ignored, so that callers refuse requests rather than run without limits.
package redis

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Client is a connection pool to one Redis server.
type Client struct {
	rdb *goredis.Client
}

// Open connects to the Redis server at url and pings it. The URL is
// redis://[[user]:password@]host[:port][/db], rediss:// for TLS, with
// go-redis's options as query parameters (max_retries, dial_timeout,
// read_timeout, pool_size, ...).
func Open(ctx context.Context, url string) (*Client, error) {
	opts, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis: parse URL: %w", err)
	}
	// Maintenance notifications are a Redis Enterprise feature; probing for
	// them on every connection only adds a round trip and log noise.
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	// One dial retry instead of go-redis's five, so that with Redis gone a
	// call fails (and its request is refused) in well under a second
	// rather than after several.
	opts.DialerRetries = 1
	c := &Client{rdb: goredis.NewClient(opts)}
	if err := c.Ping(ctx); err != nil {
		_ = c.rdb.Close()
		return nil, err
	}
	return c, nil
}

// Ping checks that the server answers.
func (c *Client) Ping(ctx context.Context) error {
	if err := c.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: ping: %w", err)
	}
	return nil
}

// Close closes the connections; the facilities built on c fail afterwards.
func (c *Client) Close() error {
	if err := c.rdb.Close(); err != nil {
		return fmt.Errorf("redis: close: %w", err)
	}
	return nil
}

// ttlMillis is the expiry in whole milliseconds (rounded up, at least 1)
// that keeps a key until until, measured on the local clock now.
func ttlMillis(until, now time.Time) int64 {
	d := until.Sub(now)
	return max(int64((d+time.Millisecond-1)/time.Millisecond), 1)
}
