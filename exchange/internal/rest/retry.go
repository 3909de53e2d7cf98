package rest

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/exgate/exgate"
)

// ReadRetries is how many more times a read is sent after a failure that
// may be retried; a write is sent once.
const ReadRetries = 2

// ErrAgain, returned by an attempt, sends the call again at once without
// counting a retry: after the adapter corrected its clock offset for a
// request the exchange refused unexecuted. An attempt returns it at most
// once per call.
var ErrAgain = errors.New("send again")

// Retry runs attempt once for a write, and for a read up to ReadRetries
// more times while retryable says the failure may be sent again, waiting
// Backoff, then twice that, with jitter, between tries; a wait that would
// not fit before the deadline ends the tries. An *exgate.Error (pacing
// refused, the answer is final) is never retried. It returns attempt's
// last error.
func (t Transport) Retry(ctx context.Context, write bool, retryable func(error) bool, attempt func() error) error {
	retries := 0
	for {
		err := attempt()
		if errors.Is(err, ErrAgain) {
			continue
		}
		if _, final := errors.AsType[*exgate.Error](err); err == nil || final || write ||
			retries >= ReadRetries || !retryable(err) || ctx.Err() != nil {
			return err
		}
		d := t.Backoff << retries
		d += rand.N(d/2 + 1) // jitter
		retries++
		if Wait(ctx, d, t.MaxWait, t.Exchange+" retrying a failed read") != nil {
			return err
		}
	}
}
