package redis

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Slots counts holders of a bounded number of slots per key (such as a
// client key's open stream connections) across every instance using the
// same Redis and prefix: a sorted set under prefix + "slots:" + key whose
// members are the holders, scored by their expiry in Unix milliseconds.
type Slots struct {
	rdb    *goredis.Client
	prefix string
	now    func() time.Time
}

// NewSlots returns slots over c whose keys start with prefix.
func NewSlots(c *Client, prefix string) *Slots {
	return &Slots{rdb: c.rdb, prefix: prefix, now: time.Now}
}

// acquireScript takes a slot of the set KEYS[1] for ARGV[1] until ARGV[3]
// (Unix ms) unless ARGV[4] live holders (expiry after ARGV[2], now) are
// there; 1 when taken, 0 when full.
var acquireScript = goredis.NewScript(`
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", ARGV[2])
if not redis.call("ZSCORE", KEYS[1], ARGV[1]) and redis.call("ZCARD", KEYS[1]) >= tonumber(ARGV[4]) then
  return 0
end
redis.call("ZADD", KEYS[1], ARGV[3], ARGV[1])
redis.call("PEXPIREAT", KEYS[1], redis.call("ZRANGE", KEYS[1], -1, -1, "WITHSCORES")[2])
return 1
`)

// Acquire takes a slot of key for id until until and reports true, or
// reports false, taking nothing, when limit slots are held (expired ones
// not counted). An id already holding a slot keeps it with the new
// expiry.
func (s *Slots) Acquire(ctx context.Context, key, id string, limit int, until time.Time) (bool, error) {
	n, err := acquireScript.Run(ctx, s.rdb, []string{s.prefix + "slots:" + key},
		id, s.now().UnixMilli(), until.UnixMilli(), limit).Int()
	if err != nil {
		return false, fmt.Errorf("redis: slots %q: %w", key, err)
	}
	return n == 1, nil
}

// Renew keeps id's slot of key until until, whatever the limit.
func (s *Slots) Renew(ctx context.Context, key, id string, until time.Time) error {
	n := int(^uint(0) >> 1)
	if _, err := acquireScript.Run(ctx, s.rdb, []string{s.prefix + "slots:" + key},
		id, s.now().UnixMilli(), until.UnixMilli(), n).Int(); err != nil {
		return fmt.Errorf("redis: slots %q: %w", key, err)
	}
	return nil
}

// Release gives id's slot of key back.
func (s *Slots) Release(ctx context.Context, key, id string) error {
	if err := s.rdb.ZRem(ctx, s.prefix+"slots:"+key, id).Err(); err != nil {
		return fmt.Errorf("redis: slots %q: %w", key, err)
	}
	return nil
}
