package rest

import (
	"context"
	"time"

	"golang.org/x/sync/singleflight"
)

// Await waits for a load that concurrent callers share through
// singleflight.Group.DoChan (a market list, a coin list) and returns its
// value. The load runs on without a caller whose ctx ends first; that
// caller is told EXCHANGE_UNAVAILABLE with Retry-After (its own request
// was never sent: it waited in the gateway, not at the exchange), never
// EXCHANGE_TIMEOUT.
func Await[T any](ctx context.Context, ch <-chan singleflight.Result, what string) (T, error) {
	select {
	case res := <-ch:
		return value[T](res)
	case <-ctx.Done():
		select {
		case res := <-ch: // the load ended at the same moment
			return value[T](res)
		default:
		}
		var zero T
		return zero, Unavailable(time.Second, "%s not loaded in time; nothing was sent: %v", what, ctx.Err())
	}
}

func value[T any](res singleflight.Result) (T, error) {
	if res.Err != nil {
		var zero T
		return zero, res.Err
	}
	return res.Val.(T), nil
}
