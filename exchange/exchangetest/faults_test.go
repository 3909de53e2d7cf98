package exchangetest_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/exchange/exchangetest"
)

// TestFaultClient: only a fault held past the deadline times out; the fake
// applies the fault the client chose; WaitIdle returns once the fake let
// go of the held request.
func TestFaultClient(t *testing.T) {
	fake := binancefake.New(binancefake.Options{WeightLimit: -1})
	t.Cleanup(fake.Close)
	fc := exchangetest.NewFaultClient(t, 50*time.Millisecond)
	fake.SetFault(fc.Hook)
	get := func() (int, error) {
		resp, err := fc.Client().Get(fake.URL + "/api/v3/time")
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	tests := []struct {
		name    string
		fault   binancefake.Fault
		status  int
		timeout bool
	}{
		{name: "none", status: 200},
		{name: "status", fault: binancefake.Fault{Status: 503}, status: 503},
		{name: "delay inside the deadline", fault: binancefake.Fault{Delay: 20 * time.Millisecond}, status: 200},
		{name: "held past the deadline", fault: binancefake.Fault{Delay: time.Second}, timeout: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fc.Set(func(*http.Request) binancefake.Fault { return tc.fault })
			status, err := get()
			var ne interface{ Timeout() bool }
			switch {
			case tc.timeout && (err == nil || !errors.As(err, &ne) || !ne.Timeout()):
				t.Fatalf("got %d %v, want a timeout", status, err)
			case !tc.timeout && (err != nil || status != tc.status):
				t.Fatalf("got %d %v, want %d", status, err, tc.status)
			}
			fc.Set(nil)
			fc.WaitIdle(t, fake.Busy)
			if n := fake.Busy(); n != 0 {
				t.Fatalf("the fake handles %d requests after WaitIdle", n)
			}
		})
	}
}
