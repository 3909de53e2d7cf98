package rest

import (
	"context"
	"sync/atomic"
	"time"
)

// LearnOffset measures the exchange's clock against t.Now with one call of
// serverTime (the exchange's time in Unix milliseconds, as its time
// endpoint answers it), stores the offset (the exchange's clock minus
// ours, in milliseconds, against the middle of the call) in offset and
// logs it. The call runs on without ctx's cancellation, for at most 10 s:
// callers share it through a singleflight.Group, and one caller leaving
// must not end it for the others.
func (t Transport) LearnOffset(ctx context.Context, offset *atomic.Int64, serverTime func(context.Context) (int64, error)) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	t0 := t.Now()
	ms, err := serverTime(ctx)
	if err != nil {
		return err
	}
	t1 := t.Now()
	mid := t0.Add(t1.Sub(t0) / 2)
	offset.Store(ms - mid.UnixMilli())
	t.Log.InfoContext(ctx, t.Exchange+" clock offset learned", "offsetMs", offset.Load())
	return nil
}
