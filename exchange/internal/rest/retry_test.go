package rest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

// TestRetry: reads are sent up to 1+ReadRetries times while the failure
// may be retried, writes and final answers once, ErrAgain without counting.
func TestRetry(t *testing.T) {
	transient := errors.New("connection reset")
	tests := []struct {
		name  string
		write bool
		errs  []error // attempt's answers in order; then nil
		want  int     // attempts made
		fail  bool
	}{
		{"read succeeds", false, nil, 1, false},
		{"read retried until it succeeds", false, []error{transient, transient}, 3, false},
		{"read gives up after the retries", false, []error{transient, transient, transient, transient}, 3, true},
		{"write is sent once", true, []error{transient}, 1, true},
		{"final answer is not retried", false, []error{exgate.Errorf(exgate.CodeExchangeUnavailable, "paced")}, 1, true},
		{"not retryable", false, []error{errors.New("refused")}, 1, true},
		{"again does not count", false, []error{ErrAgain, transient, transient}, 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := Transport{Exchange: "testex", MaxWait: time.Second, Backoff: time.Microsecond}
			n := 0
			err := tr.Retry(context.Background(), tt.write, func(err error) bool { return errors.Is(err, transient) }, func() error {
				n++
				if n <= len(tt.errs) {
					return tt.errs[n-1]
				}
				return nil
			})
			if n != tt.want || (err != nil) != tt.fail {
				t.Fatalf("%d attempts, err %v; want %d attempts, failure %v", n, err, tt.want, tt.fail)
			}
		})
	}
}
