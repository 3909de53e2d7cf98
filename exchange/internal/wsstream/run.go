// Package wsstream holds what the adapters' live streams (exgate.Streamer,
// docs/contract.md 2.5) share: the reconnect loop with backoff and jitter,
// and the order book kept from a snapshot plus updates. The exchanges'
// protocols (subscriptions, authentication, sequence and checksum rules)
// stay in each adapter.
package wsstream

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/exgate/exgate"
)

// Backoff is the wait between two connection attempts: Min doubled per
// failed attempt up to Max, of which a random part (jitter) is taken so
// that many instances dropped at once do not come back at once.
type Backoff struct {
	// Min is the first wait (default 250 ms), Max the longest (default
	// 30 s).
	Min, Max time.Duration
	// Rand returns a number in [0, 1); default math/rand/v2.Float64.
	Rand func() float64
}

// Delay is the wait before attempt n (1 for the first retry): a random
// duration between half and all of min(Min·2^(n-1), Max).
func (b Backoff) Delay(n int) time.Duration {
	lo, hi := b.Min, b.Max
	if lo <= 0 {
		lo = 250 * time.Millisecond
	}
	if hi <= 0 {
		hi = 30 * time.Second
	}
	d := lo
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	r := b.Rand
	if r == nil {
		r = rand.Float64
	}
	return d/2 + time.Duration(r()*float64(d/2))
}

// Config tunes Run.
type Config struct {
	Backoff Backoff
	// Sleep waits d or until ctx ends; tests replace it. Default a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger hears of each failed session (default: discarded).
	Logger *slog.Logger
	// Name labels the log lines (exchange and channel).
	Name string
}

// Session is one connection attempt of Run.
type Session struct {
	// Attempt counts the sessions since the last live one: 0 for the
	// very first, more after failures.
	Attempt int
	// Reconnect is true for every session but the first: the stream was
	// down, so the session must bring its state up to date (a new book
	// snapshot, the orders changed meanwhile from the REST API).
	Reconnect bool
	live      bool
}

// Live tells Run that the session is subscribed and receiving, so the
// next failure starts the backoff from the beginning again.
func (s *Session) Live() { s.live = true }

// Run calls session again and again until ctx ends (it then returns nil)
// or session returns a permanent error (Permanent), which it returns.
// Between two sessions it waits Config.Backoff. Each session that ends
// is reported to the Watch's caller (exgate.StreamLost).
func Run(ctx context.Context, cfg Config, session func(ctx context.Context, s *Session) error) error {
	sleep := cfg.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Session{}
	for {
		err := session(ctx, s)
		if ctx.Err() != nil {
			return nil
		}
		// What the session emitted last may no longer hold.
		exgate.StreamLost(ctx)
		if Permanent(err) {
			return err
		}
		if s.live {
			s.Attempt = 0
		}
		s.Attempt++
		s.Reconnect, s.live = true, false
		d := cfg.Backoff.Delay(s.Attempt)
		log.WarnContext(ctx, "stream reconnecting", "stream", cfg.Name, "attempt", s.Attempt, "delay", d, "err", err)
		if sleep(ctx, d) != nil {
			return nil
		}
	}
}

// Permanent reports whether err is one that reconnecting cannot mend:
// the exchange refused the key or its permissions, or the pair does not
// exist (exgate.Streamer).
func Permanent(err error) bool {
	var e *exgate.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case exgate.CodeExchangeAuthFailed, exgate.CodePermissionDenied, exgate.CodeUnknownSymbol:
		return true
	}
	return false
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
