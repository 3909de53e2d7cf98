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

// claimScript claims KEYS[1] (the replay key) for the owner whose live
// keys are the members of the sorted set KEYS[2], scored by their expiry
// in Unix milliseconds. ARGV: now and expiry (Unix ms), the key's TTL (ms),
// the owner's quota and the route. The key's value is "u" (in use) or "r"
// (released) followed by the route it is bound to. It returns {1, route}
// for a first use (a new key, or one released on the same route), {0,
// bound route} for a key already claimed, {-1, ""} when the owner holds
// quota live keys (nothing is recorded).
var claimScript = goredis.NewScript(`
local v = redis.call("GET", KEYS[1])
if v then
  if v == "r" .. ARGV[5] then
    redis.call("SET", KEYS[1], "u" .. ARGV[5], "KEEPTTL")
    return {1, ARGV[5]}
  end
  return {0, string.sub(v, 2)}
end
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", ARGV[1])
if redis.call("ZCARD", KEYS[2]) >= tonumber(ARGV[4]) then
  return {-1, ""}
end
redis.call("SET", KEYS[1], "u" .. ARGV[5], "PX", ARGV[3])
redis.call("ZADD", KEYS[2], ARGV[2], KEYS[1])
if redis.call("PTTL", KEYS[2]) < tonumber(ARGV[3]) then
  redis.call("PEXPIRE", KEYS[2], ARGV[3])
end
return {1, ARGV[5]}
`)

// releaseScript marks KEYS[1] released when it is in use on route ARGV[1],
// keeping its TTL.
var releaseScript = goredis.NewScript(`
if redis.call("GET", KEYS[1]) == "u" .. ARGV[1] then
  redis.call("SET", KEYS[1], "r" .. ARGV[1], "KEEPTTL")
end
return 1
`)

// FirstUseBy is FirstUse for a key that owner (a client key) records: an
// owner holding quota live keys gets an error wrapping exgate.ErrOverQuota
// and records nothing, so one owner cannot fill Redis for the others. An
// owner's live keys are counted in a sorted set under prefix +
// "replay-owner:" + owner.
func (g *ReplayGuard) FirstUseBy(ctx context.Context, owner, key string, expiry time.Time, quota int) (bool, error) {
	first, _, err := g.Claim(ctx, owner, key, "", expiry, quota)
	return first, err
}

// Claim records key for owner, bound to route, until expiry, and reports
// whether this is its first use. A key already claimed is not a first use
// (boundTo names the route it was first claimed on), except a key
// released on the same route, which is claimed again. An owner holding
// quota live keys gets an error wrapping exgate.ErrOverQuota and records
// nothing. A key whose expiry has passed is not remembered.
func (g *ReplayGuard) Claim(ctx context.Context, owner, key, route string, expiry time.Time, quota int) (first bool, boundTo string, err error) {
	if quota <= 0 {
		return false, "", fmt.Errorf("redis: replay guard: quota %d for %q is not positive", quota, owner)
	}
	now := g.now()
	rkey := g.prefix + "replay:" + key
	if !expiry.After(now) {
		// Nothing to remember, but a key still live is not a first use.
		v, err := g.rdb.Get(ctx, rkey).Result()
		switch {
		case errors.Is(err, goredis.Nil):
			return true, route, nil
		case err != nil:
			return false, "", fmt.Errorf("redis: replay guard %q: %w", key, err)
		}
		if v == "r"+route {
			return true, route, nil
		}
		if len(v) > 0 {
			v = v[1:]
		}
		return false, v, nil
	}
	res, err := claimScript.Run(ctx, g.rdb,
		[]string{rkey, g.prefix + "replay-owner:" + owner},
		now.UnixMilli(), expiry.UnixMilli(), ttlMillis(expiry, now), quota, route).Slice()
	if err != nil {
		return false, "", fmt.Errorf("redis: replay guard %q: %w", key, err)
	}
	if len(res) != 2 {
		return false, "", fmt.Errorf("redis: replay guard %q: unexpected answer %v", key, res)
	}
	code, _ := res[0].(int64)
	bound, _ := res[1].(string)
	switch code {
	case 1:
		return true, route, nil
	case 0:
		return false, bound, nil
	default:
		return false, "", fmt.Errorf("redis: replay guard: %q holds %d live keys: %w", owner, quota, exgate.ErrOverQuota)
	}
}

// Release gives back the claim of key on route, keeping its binding and
// expiry: the key may then be claimed again, on that route only. A key
// claimed on another route, or not claimed, is left as it is.
func (g *ReplayGuard) Release(ctx context.Context, owner, key, route string) error {
	if err := releaseScript.Run(ctx, g.rdb, []string{g.prefix + "replay:" + key}, route).Err(); err != nil {
		return fmt.Errorf("redis: replay guard release %q: %w", key, err)
	}
	return nil
}
