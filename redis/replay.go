package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/exgate/exgate"
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

// firstUseByScript records KEYS[1] (the replay key) for the owner whose
// live keys are the members of the sorted set KEYS[2], scored by their
// expiry in Unix milliseconds. ARGV: now and expiry (Unix ms), the key's
// TTL (ms) and the owner's quota. It returns 0 for a key already recorded,
// -1 when the owner holds quota live keys (nothing is recorded), else 1.
var firstUseByScript = goredis.NewScript(`
if redis.call("EXISTS", KEYS[1]) == 1 then
  return 0
end
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", ARGV[1])
if redis.call("ZCARD", KEYS[2]) >= tonumber(ARGV[4]) then
  return -1
end
redis.call("SET", KEYS[1], "1", "PX", ARGV[3])
redis.call("ZADD", KEYS[2], ARGV[2], KEYS[1])
if redis.call("PTTL", KEYS[2]) < tonumber(ARGV[3]) then
  redis.call("PEXPIRE", KEYS[2], ARGV[3])
end
return 1
`)

// FirstUseBy is FirstUse for a key that owner (a client key) records: an
// owner holding quota live keys gets an error wrapping exgate.ErrOverQuota
// and records nothing, so one owner cannot fill Redis for the others. An
// owner's live keys are counted in a sorted set under prefix +
// "replay-owner:" + owner.
func (g *ReplayGuard) FirstUseBy(ctx context.Context, owner, key string, expiry time.Time, quota int) (bool, error) {
	if quota <= 0 {
		return false, fmt.Errorf("redis: replay guard: quota %d for %q is not positive", quota, owner)
	}
	now := g.now()
	if !expiry.After(now) {
		// Nothing to remember, but a key still live is a replay.
		n, err := g.rdb.Exists(ctx, g.prefix+"replay:"+key).Result()
		if err != nil {
			return false, fmt.Errorf("redis: replay guard %q: %w", key, err)
		}
		return n == 0, nil
	}
	res, err := firstUseByScript.Run(ctx, g.rdb,
		[]string{g.prefix + "replay:" + key, g.prefix + "replay-owner:" + owner},
		now.UnixMilli(), expiry.UnixMilli(), ttlMillis(expiry, now), quota).Int()
	if err != nil {
		return false, fmt.Errorf("redis: replay guard %q: %w", key, err)
	}
	switch res {
	case 1:
		return true, nil
	case 0:
		return false, nil
	default:
		return false, fmt.Errorf("redis: replay guard: %q holds %d live keys: %w", owner, quota, exgate.ErrOverQuota)
	}
}
