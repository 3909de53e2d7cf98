package rest

import (
	"context"
	"errors"
	"testing"

	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
)

// TestAwait: a caller that stops waiting for a shared load is told 503
// with Retry-After, not 504; a finished load answers with its value or
// error.
func TestAwait(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name     string
		res      *singleflight.Result // nil: the load never ends
		want     int
		wantErr  error
		wantCode exgate.Code
	}{
		{"loaded", &singleflight.Result{Val: 7}, 7, nil, ""},
		{"load failed", &singleflight.Result{Err: boom}, 0, boom, ""},
		{"caller's deadline first", nil, 0, nil, exgate.CodeExchangeUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := make(chan singleflight.Result, 1)
			ctx := t.Context()
			if tt.res != nil {
				ch <- *tt.res
			} else {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				cancel()
			}
			got, err := Await[int](ctx, ch, "testex market list")
			if tt.wantCode != "" {
				e, ok := errors.AsType[*exgate.Error](err)
				if !ok || e.Code != tt.wantCode || e.RetryAfter <= 0 {
					t.Fatalf("Await = %v; want %s with Retry-After", err, tt.wantCode)
				}
				return
			}
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Fatalf("Await = %d, %v; want %d, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
