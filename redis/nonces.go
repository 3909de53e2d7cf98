package redis

import (
	"context"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"
)

// nextScript sets KEYS[1] to max(current+1, ARGV[1]) and returns it. The
// values are kept as decimal strings and compared by length, then
// lexically (ARGV[1] is positive and has no leading zeros), so that no
// int64 passes through Lua's floating-point numbers; INCR does the
// addition exactly and fails at the largest int64.
var nextScript = goredis.NewScript(`
local cur = redis.call("GET", KEYS[1])
local floor = ARGV[1]
if not cur or #floor > #cur or (#floor == #cur and floor > cur) then
  redis.call("SET", KEYS[1], floor)
  return floor
end
redis.call("INCR", KEYS[1])
return redis.call("GET", KEYS[1])
`)

// Nonces hands out strictly increasing numbers per key, shared by every
// instance using the same Redis and prefix. A key lives under prefix +
// "nonce:" + key and never expires.
type Nonces struct {
	rdb    *goredis.Client
	prefix string
}

// NewNonces returns Nonces over c whose keys start with prefix.
func NewNonces(c *Client, prefix string) *Nonces {
	return &Nonces{rdb: c.rdb, prefix: prefix}
}

// Next returns a value greater than every value returned before for key
// by any instance, and at least floor (and at least 1). It fails once
// key's values reach the largest int64.
func (n *Nonces) Next(ctx context.Context, key string, floor int64) (int64, error) {
	s, err := nextScript.Run(ctx, n.rdb, []string{n.prefix + "nonce:" + key}, strconv.FormatInt(max(floor, 1), 10)).Text()
	if err != nil {
		return 0, fmt.Errorf("redis: nonce %q: %w", key, err)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("redis: nonce %q: %w", key, err)
	}
	return v, nil
}
