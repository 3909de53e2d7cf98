package localstate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/exgate/exgate"
)

// maxLimiterKeys bounds the keys a Limiter tracks at once (rate states and
// pauses each). Keys are clients and exchange accounts, so reaching it
// means something is wrong; Reserve and Pause then fail rather than forget
// a budget.
const maxLimiterKeys = 1 << 20

// errLimiterFull is returned when a Limiter tracks maxLimiterKeys live keys.
var errLimiterFull = errors.New("localstate: limiter full")

// Limiter is a generic cell rate algorithm (GCRA) limiter per key, with
// pauses. It keeps one theoretical arrival time per key, forgotten once it
// has passed.
type Limiter struct {
	now func() time.Time

	mu     sync.Mutex
	tat    table[struct{}]  // expires = theoretical arrival time
	paused table[time.Time] // value = expires = end of the pause
}

// NewLimiter returns a Limiter on the clock now (time.Now when nil).
func NewLimiter(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now, tat: newTable[struct{}](maxLimiterKeys), paused: newTable[time.Time](maxLimiterKeys)}
}

// Reserve takes cost from key's budget under limit and returns 0, or takes
// nothing and returns how long until it could. While key is paused it
// returns at least the rest of the pause. A Burst below 1 counts as 1. A
// cost above the burst can never be taken and is an error, as are a
// negative cost and a limit without a positive Rate and Period; a cost of
// 0 takes nothing and only reports a pause.
func (l *Limiter) Reserve(_ context.Context, key string, cost int, limit exgate.RateLimit) (time.Duration, error) {
	burst, emission, err := checkLimit(key, cost, limit)
	if err != nil {
		return 0, err
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if until, ok := l.paused.get(key, now); ok {
		return until.Sub(now), nil
	}
	if cost == 0 {
		return 0, nil
	}
	tat := now
	if e, ok := l.tat.entries[key]; ok && e.expires.After(now) {
		tat = e.expires
	}
	newTAT := tat.Add(emission * time.Duration(cost))
	if wait := newTAT.Sub(now) - emission*time.Duration(burst); wait > 0 {
		return wait, nil
	}
	if !l.tat.put(key, struct{}{}, newTAT, now) {
		return 0, fmt.Errorf("reserve %q: %w", key, errLimiterFull)
	}
	return 0, nil
}

// checkLimit validates a Reserve call and returns the burst and the
// emission interval (the time one unit of cost takes to come back).
func checkLimit(key string, cost int, limit exgate.RateLimit) (burst int, emission time.Duration, err error) {
	if limit.Rate <= 0 || limit.Period <= 0 {
		return 0, 0, fmt.Errorf("localstate: reserve %q: invalid limit %d per %v", key, limit.Rate, limit.Period)
	}
	burst = max(limit.Burst, 1)
	if cost < 0 || cost > burst {
		return 0, 0, fmt.Errorf("localstate: reserve %q: cost %d outside 0..%d (the burst)", key, cost, burst)
	}
	emission = limit.Period / time.Duration(limit.Rate)
	if emission <= 0 {
		return 0, 0, fmt.Errorf("localstate: reserve %q: rate %d per %v is finer than a nanosecond", key, limit.Rate, limit.Period)
	}
	return burst, emission, nil
}

// Pause makes every Reserve on key wait until until. A pause never
// shortens a longer one already in place, and one that has already ended
// changes nothing.
func (l *Limiter) Pause(_ context.Context, key string, until time.Time) error {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.paused.get(key, now); ok && !until.After(cur) || !until.After(now) {
		return nil
	}
	if !l.paused.put(key, until, until, now) {
		return fmt.Errorf("pause %q: %w", key, errLimiterFull)
	}
	return nil
}

// PausedUntil reports when key's pause ends, or the zero time when key is
// not paused.
func (l *Limiter) PausedUntil(_ context.Context, key string) (time.Time, error) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	until, _ := l.paused.get(key, now)
	return until, nil
}
