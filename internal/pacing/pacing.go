// Package pacing holds what the exchange adapters share to wait for an
// exchange's rate limit without outliving a request: a wait that either
// fits before the caller's deadline or is refused at once as
// EXCHANGE_UNAVAILABLE with Retry-After, so that a client is told to come
// back instead of being queued past its deadline.
package pacing

import (
	"context"
	"time"

	"github.com/exgate/exgate"
)

// Unavailable is EXCHANGE_UNAVAILABLE with Retry-After retryAfter: nothing
// was sent to the exchange.
func Unavailable(retryAfter time.Duration, format string, args ...any) *exgate.Error {
	e := exgate.Errorf(exgate.CodeExchangeUnavailable, format, args...)
	e.RetryAfter = retryAfter
	return e
}

// Wait sleeps d if that ends before ctx's deadline, or, when ctx has none,
// if d is at most maxWait. Otherwise, or when ctx ends first, it returns
// Unavailable saying "<what>; retry in d" (what names the exchange and the
// reason, such as "binance request budget in use").
func Wait(ctx context.Context, d, maxWait time.Duration, what string) error {
	if deadline, ok := ctx.Deadline(); ok {
		if time.Until(deadline) <= d {
			return Unavailable(d, "%s; retry in %s", what, d.Round(time.Millisecond))
		}
	} else if d > maxWait {
		return Unavailable(d, "%s; retry in %s", what, d.Round(time.Millisecond))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return Unavailable(d, "%s; gave up waiting: %v", what, ctx.Err())
	case <-t.C:
		return nil
	}
}
