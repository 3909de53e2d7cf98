package rest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

func TestWait(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	long, cancelLong := context.WithTimeout(context.Background(), time.Minute)
	defer cancelLong()
	tight, cancelTight := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancelTight()
	tests := []struct {
		name    string
		ctx     context.Context
		d       time.Duration
		maxWait time.Duration
		want    string // "" for waited, else a part of the detail
	}{
		{"fits the deadline", long, time.Millisecond, 0, ""},
		{"past the deadline: refused at once", short, time.Hour, time.Hour, "retry in 1h0m0s"},
		{"ends before the deadline without time for the call: refused at once", tight, 2*time.Second - MinCallTime/2, time.Hour, "retry in 1.875s"},
		{"no deadline, within maxWait", context.Background(), time.Millisecond, time.Second, ""},
		{"no deadline, over maxWait", context.Background(), 2 * time.Second, time.Second, "retry in 2s"},
		{"ctx ends while waiting", cancelled, time.Hour, 2 * time.Hour, "gave up waiting: context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Wait(tt.ctx, tt.d, tt.maxWait, "testex budget in use")
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Wait = %v; want nil", err)
				}
				return
			}
			e, ok := errors.AsType[*exgate.Error](err)
			if !ok || e.Code != exgate.CodeExchangeUnavailable || e.RetryAfter != tt.d ||
				!strings.HasPrefix(e.Detail, "testex budget in use; ") || !strings.Contains(e.Detail, tt.want) {
				t.Fatalf("Wait = %#v; want EXCHANGE_UNAVAILABLE, Retry-After %s, detail with %q", err, tt.d, tt.want)
			}
		})
	}
}

// fakeLimiter answers Reserve from a script and records pauses.
type fakeLimiter struct {
	waits  []time.Duration // Reserve's answers, in order; then 0
	paused time.Time
	err    error
	calls  int
}

func (l *fakeLimiter) Reserve(context.Context, string, int, exgate.RateLimit) (time.Duration, error) {
	l.calls++
	if l.err != nil {
		return 0, l.err
	}
	if len(l.waits) == 0 {
		return 0, nil
	}
	w := l.waits[0]
	l.waits = l.waits[1:]
	return w, nil
}

func (l *fakeLimiter) Pause(_ context.Context, _ string, until time.Time) error {
	l.paused = until
	return nil
}

func (l *fakeLimiter) PausedUntil(context.Context, string) (time.Time, error) { return l.paused, l.err }

// TestPacerTake: the pace loop waits while the waits fit the deadline and
// otherwise refuses with 503 EXCHANGE_UNAVAILABLE and Retry-After, never
// by holding the call until its deadline has passed.
func TestPacerTake(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name      string
		timeout   time.Duration
		waits     []time.Duration
		pausedFor time.Duration
		err       error
		want      string // "" for taken, else a part of the detail
		retry     time.Duration
	}{
		{"free budget", time.Second, nil, 0, nil, "", 0},
		{"short waits that fit", time.Minute, []time.Duration{time.Millisecond, 2 * time.Millisecond}, 0, nil, "", 0},
		{"a wait that does not fit", time.Second, []time.Duration{5 * time.Second}, 0, nil, "testex request budget in use; nothing was sent; retry in 5s", 5 * time.Second},
		{"a later wait that does not fit", time.Second, []time.Duration{time.Millisecond, 900 * time.Millisecond}, 0, nil, "testex request budget in use; nothing was sent; retry in 900ms", 900 * time.Millisecond},
		{"paused past the deadline", time.Second, nil, time.Hour, nil, "testex asked to back off; nothing was sent; retry in 1h0m0s", time.Hour},
		{"limiter unreachable", time.Second, nil, 0, errors.New("redis down"), "testex pacing state unavailable; nothing was sent", time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := &fakeLimiter{waits: tt.waits, err: tt.err}
			if tt.pausedFor > 0 {
				lim.paused = now.Add(tt.pausedFor)
			}
			p := &Pacer{Limiter: lim, Now: func() time.Time { return now }, MaxWait: time.Hour, Exchange: "testex"}
			ctx, cancel := context.WithTimeout(t.Context(), tt.timeout)
			defer cancel()
			err := p.Take(ctx, Budget{Key: "k", Cost: 1, Limit: exgate.RateLimit{Rate: 1, Period: time.Second, Burst: 1}, What: "request budget"})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Take = %v; want nil", err)
				}
				return
			}
			e, ok := errors.AsType[*exgate.Error](err)
			if !ok || e.Code != exgate.CodeExchangeUnavailable || e.RetryAfter != tt.retry || !strings.Contains(e.Detail, tt.want) {
				t.Fatalf("Take = %#v; want EXCHANGE_UNAVAILABLE, Retry-After %s, detail with %q", err, tt.retry, tt.want)
			}
		})
	}
}
