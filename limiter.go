package exgate

import (
	"context"
	"time"
)

// Limiter paces calls to an exchange: localstate.Limiter (in process) and
// the redis package's limiter (shared by instances) implement it; the
// exchange adapters take every call's cost from it before sending.
type Limiter interface {
	// Reserve takes cost from key's budget, or returns how long until it
	// could (0 = taken; nothing is taken otherwise).
	Reserve(ctx context.Context, key string, cost int, limit RateLimit) (retryAfter time.Duration, err error)
	// Pause stops all calls for key until t (the exchange said back off).
	Pause(ctx context.Context, key string, until time.Time) error
	// PausedUntil reports the pause end for key (zero time if none).
	PausedUntil(ctx context.Context, key string) (time.Time, error)
}
