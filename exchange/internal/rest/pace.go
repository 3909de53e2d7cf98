package rest

import (
	"context"
	"time"

	"github.com/exgate/exgate"
)

// MinCallTime is the least time a call must have left before its
// deadline once a pacing wait ends. A wait that would leave less is
// refused at once as EXCHANGE_UNAVAILABLE with Retry-After: the gateway's
// own pacing must never hold a request until the exchange call has no
// time left and times out (EXCHANGE_TIMEOUT would blame the exchange and,
// for a write, leave the outcome looking unknown).
const MinCallTime = 250 * time.Millisecond

// Unavailable is EXCHANGE_UNAVAILABLE with Retry-After retryAfter: nothing
// was sent to the exchange.
func Unavailable(retryAfter time.Duration, format string, args ...any) *exgate.Error {
	e := exgate.Errorf(exgate.CodeExchangeUnavailable, format, args...)
	e.RetryAfter = retryAfter
	return e
}

// Wait sleeps d if that still leaves MinCallTime before ctx's deadline,
// or, when ctx has none, if d is at most maxWait. Otherwise, or when ctx
// ends first, it returns Unavailable saying "<what>; nothing was sent;
// retry in d" (what names the exchange and the reason, such as "binance
// request budget in use").
func Wait(ctx context.Context, d, maxWait time.Duration, what string) error {
	if deadline, ok := ctx.Deadline(); ok {
		if time.Until(deadline) < d+MinCallTime {
			return Unavailable(d, "%s; nothing was sent; retry in %s", what, d.Round(time.Millisecond))
		}
	} else if d > maxWait {
		return Unavailable(d, "%s; nothing was sent; retry in %s", what, d.Round(time.Millisecond))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return Unavailable(d, "%s; nothing was sent; gave up waiting: %v", what, ctx.Err())
	case <-t.C:
		return nil
	}
}

// Budget is one cost a call takes from the limiter before it is sent: a
// request weight, an account's order count, Kraken's call counter.
type Budget struct {
	// Key names the budget in the limiter ("binance/ip/weight").
	Key  string
	Cost int
	// Limit is the budget's rate; Reserve never takes more than its
	// burst at once.
	Limit exgate.RateLimit
	// What names the budget in a refusal's detail ("request budget",
	// "call counter of this key").
	What string
}

// Pacer takes a call's cost from its budgets, waiting for them when the
// wait fits before the caller's deadline, and honours the pauses set after
// the exchange said to back off. Every adapter paces through one; the
// budgets and their keys are the adapter's own.
type Pacer struct {
	Limiter exgate.Limiter
	Now     func() time.Time
	// MaxWait bounds a wait when the context has no deadline.
	MaxWait time.Duration
	// Exchange names the exchange in details ("binance").
	Exchange string
}

// Take takes every budget in order, or returns EXCHANGE_UNAVAILABLE with
// Retry-After; then nothing was sent. A budget taken before a later one
// is refused stays taken (a limiter cannot give back), which errs on the
// side of sending less.
func (p Pacer) Take(ctx context.Context, budgets ...Budget) error {
	for _, b := range budgets {
		if err := p.take(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

func (p Pacer) take(ctx context.Context, b Budget) error {
	for {
		until, err := p.Limiter.PausedUntil(ctx, b.Key)
		if err != nil {
			return p.unreachable(err)
		}
		what := p.Exchange + " asked to back off"
		wait := until.Sub(p.Now())
		if wait <= 0 {
			if wait, err = p.Limiter.Reserve(ctx, b.Key, b.Cost, b.Limit); err != nil {
				return p.unreachable(err)
			}
			if wait <= 0 {
				return nil
			}
			what = p.Exchange + " " + b.What + " in use"
		}
		err = Wait(ctx, wait, p.MaxWait, what)
		if o, ok := p.Limiter.(PaceObserver); ok {
			o.ObservePace(p.Exchange, b.What, err != nil)
		}
		if err != nil {
			return err
		}
	}
}

// PaceObserver is what a Pacer's Limiter may also implement to hear of the
// calls pacing held back (metrics): budget is Budget.What, refused is true
// when the call was answered without being sent.
type PaceObserver interface {
	ObservePace(exchange, budget string, refused bool)
}

func (p Pacer) unreachable(err error) error {
	return &exgate.Error{Code: exgate.CodeExchangeUnavailable, RetryAfter: time.Second,
		Detail: p.Exchange + " pacing state unavailable; nothing was sent", Err: err}
}

// Pause stops calls for key until now+d; a failure is only logged by the
// caller (the answer already says to back off).
func (p Pacer) Pause(ctx context.Context, key string, d time.Duration) (time.Time, error) {
	until := p.Now().Add(d)
	return until, p.Limiter.Pause(context.WithoutCancel(ctx), key, until)
}
