package redis

import (
	"context"
	"crypto/rand"
	"fmt"
	mathrand "math/rand/v2"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// unlockScript deletes KEYS[1] only while it still holds ARGV[1], the
// holder's token: a holder whose lock expired must not release the lock
// another instance has taken since.
var unlockScript = goredis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0
`)

// Locks are mutual-exclusion locks shared by every instance using the same
// Redis and prefix, such as the lock that keeps the calls on one Kraken
// API key one at a time across instances. A lock lives under prefix +
// "lock:" + key for at most its ttl, so that a holder that dies frees it
// by then.
type Locks struct {
	rdb    *goredis.Client
	prefix string
	// maxPoll bounds the wait between two attempts to take a held lock.
	maxPoll time.Duration
}

// NewLocks returns Locks over c whose keys start with prefix.
func NewLocks(c *Client, prefix string) *Locks {
	return &Locks{rdb: c.rdb, prefix: prefix, maxPoll: 20 * time.Millisecond}
}

// Lock takes key's lock for at most ttl, waiting while another holder has
// it until ctx is done. The returned unlock releases it if this caller
// still holds it; it is safe to call once the caller's ctx is done.
func (l *Locks) Lock(ctx context.Context, key string, ttl time.Duration) (unlock func(), err error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("redis: lock %q: ttl %s is not positive", key, ttl)
	}
	k := l.prefix + "lock:" + key
	token := rand.Text()
	wait := time.Millisecond
	for {
		ok, err := l.rdb.SetNX(ctx, k, token, ttl).Result()
		if err != nil {
			return nil, fmt.Errorf("redis: lock %q: %w", key, err)
		}
		if ok {
			return func() {
				// Released even when the caller's ctx is done: otherwise
				// the key would stay locked until the ttl.
				uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
				defer cancel()
				_ = unlockScript.Run(uctx, l.rdb, []string{k}, token).Err()
			}, nil
		}
		// Jittered, so that waiting instances do not poll in step.
		d := wait/2 + mathrand.N(wait/2+1)
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("redis: lock %q held by another instance: %w", key, ctx.Err())
		case <-timer.C:
		}
		wait = min(wait*2, l.maxPoll)
	}
}
