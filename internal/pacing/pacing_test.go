package pacing

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
	tests := []struct {
		name    string
		ctx     context.Context
		d       time.Duration
		maxWait time.Duration
		want    string // "" for waited, else a part of the detail
	}{
		{"fits the deadline", long, time.Millisecond, 0, ""},
		{"past the deadline: refused at once", short, time.Hour, time.Hour, "retry in 1h0m0s"},
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
