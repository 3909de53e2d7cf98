package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/exgate/exgate"
	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"
)

// Limiter is a generic cell rate algorithm (GCRA) limiter per key, shared
// by every instance using the same Redis and prefix.
//
// The rate state lives under "rate:" + prefix + "limit:" + key (redis_rate
// adds the "rate:") and is computed on the Redis server's clock, in
// floating-point seconds, so a boundary may move by some microseconds.
// Pauses live under prefix + "pause:" + key, hold the end of the pause in
// Unix microseconds and are compared with the local clock, as the caller's
// until is.
type Limiter struct {
	rdb    *goredis.Client
	gcra   *redis_rate.Limiter
	prefix string
	now    func() time.Time
}

// NewLimiter returns a Limiter over c whose keys start with prefix.
func NewLimiter(c *Client, prefix string) *Limiter {
	return &Limiter{rdb: c.rdb, gcra: redis_rate.NewLimiter(c.rdb), prefix: prefix, now: time.Now}
}

// Reserve takes cost from key's budget under limit and returns 0, or takes
// nothing and returns how long until it could. While key is paused it
// returns at least the rest of the pause. A Burst below 1 counts as 1. A
// cost above the burst can never be taken and is an error, as are a
// negative cost and a limit without a positive Rate and Period; a cost of
// 0 takes nothing and only reports a pause.
func (l *Limiter) Reserve(ctx context.Context, key string, cost int, limit exgate.RateLimit) (time.Duration, error) {
	if limit.Rate <= 0 || limit.Period <= 0 {
		return 0, fmt.Errorf("redis: reserve %q: invalid limit %d per %v", key, limit.Rate, limit.Period)
	}
	burst := max(limit.Burst, 1)
	if cost < 0 || cost > burst {
		return 0, fmt.Errorf("redis: reserve %q: cost %d outside 0..%d (the burst)", key, cost, burst)
	}
	until, err := l.PausedUntil(ctx, key)
	if err != nil {
		return 0, err
	}
	if !until.IsZero() {
		if wait := until.Sub(l.now()); wait > 0 {
			return wait, nil
		}
	}
	if cost == 0 {
		return 0, nil
	}
	res, err := l.gcra.AllowN(ctx, l.prefix+"limit:"+key, redis_rate.Limit{Rate: limit.Rate, Period: limit.Period, Burst: burst}, cost)
	if err != nil {
		return 0, fmt.Errorf("redis: reserve %q: %w", key, err)
	}
	if res.Allowed > 0 {
		return 0, nil
	}
	// Denied: a wait that rounds to nothing must still not read as taken.
	return max(res.RetryAfter, time.Microsecond), nil
}

// pauseScript sets KEYS[1] to ARGV[1] (the end of the pause, Unix
// microseconds) with expiry ARGV[2] milliseconds, unless it already holds
// a later end.
var pauseScript = goredis.NewScript(`
local cur = redis.call("GET", KEYS[1])
if cur and tonumber(cur) >= tonumber(ARGV[1]) then
  return 0
end
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
return 1
`)

// Pause makes every Reserve on key wait until until. A pause never
// shortens a longer one already in place, and one that has already ended
// changes nothing. until is kept to the microsecond, rounded up.
func (l *Limiter) Pause(ctx context.Context, key string, until time.Time) error {
	now := l.now()
	if !until.After(now) {
		return nil
	}
	micros := until.Add(time.Microsecond - 1).UnixMicro()
	// The key outlives the pause by a second, so that a Redis clock ahead
	// of ours cannot end it early; the stored end decides.
	ttl := ttlMillis(until, now) + 1000
	err := pauseScript.Run(ctx, l.rdb, []string{l.prefix + "pause:" + key}, micros, ttl).Err()
	if err != nil {
		return fmt.Errorf("redis: pause %q: %w", key, err)
	}
	return nil
}

// PausedUntil reports when key's pause ends, or the zero time when key is
// not paused.
func (l *Limiter) PausedUntil(ctx context.Context, key string) (time.Time, error) {
	s, err := l.rdb.Get(ctx, l.prefix+"pause:"+key).Result()
	if errors.Is(err, goredis.Nil) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("redis: paused until %q: %w", key, err)
	}
	micros, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("redis: paused until %q: %w", key, err)
	}
	until := time.UnixMicro(micros)
	if !until.After(l.now()) {
		return time.Time{}, nil
	}
	return until, nil
}
