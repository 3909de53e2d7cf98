package wsstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
)

func TestBackoffDelay(t *testing.T) {
	tests := []struct {
		n      int
		r      float64
		want   time.Duration
		reason string
	}{
		{1, 0, 50 * time.Millisecond, "half of Min with no jitter drawn"},
		{1, 0.999999999, 100 * time.Millisecond, "all of Min at the top of the jitter"},
		{2, 0, 100 * time.Millisecond, "doubled once"},
		{3, 0.5, 300 * time.Millisecond, "doubled twice, three quarters"},
		{20, 0, 500 * time.Millisecond, "capped at Max"},
	}
	for _, tt := range tests {
		b := Backoff{Min: 100 * time.Millisecond, Max: time.Second, Rand: func() float64 { return tt.r }}
		if got := b.Delay(tt.n); got.Round(time.Millisecond) != tt.want {
			t.Errorf("Delay(%d) with rand %v = %v, want %v (%s)", tt.n, tt.r, got, tt.want, tt.reason)
		}
	}
}

func TestRun(t *testing.T) {
	refused := exgate.Errorf(exgate.CodeExchangeAuthFailed, "key refused")
	var delays []time.Duration
	var seen []Session
	cfg := Config{
		Backoff: Backoff{Min: time.Second, Max: time.Minute, Rand: func() float64 { return 0 }},
		Sleep:   func(_ context.Context, d time.Duration) error { delays = append(delays, d); return nil },
	}
	// Two failed attempts, a live session that then drops, one more
	// failure, then a permanent refusal.
	script := []func(s *Session) error{
		func(*Session) error { return errors.New("dial refused") },
		func(*Session) error { return errors.New("dial refused") },
		func(s *Session) error { s.Live(); return errors.New("connection reset") },
		func(*Session) error { return errors.New("dial refused") },
		func(*Session) error { return refused },
	}
	// The Watch's caller hears of every session that ended, before the
	// next one starts.
	lost := 0
	ctx := exgate.ContextWithStreamLost(t.Context(), func() { lost++ })
	err := Run(ctx, cfg, func(_ context.Context, s *Session) error {
		if lost != len(seen) {
			t.Errorf("session %d started after %d sessions reported lost", len(seen), lost)
		}
		seen = append(seen, Session{Attempt: s.Attempt, Reconnect: s.Reconnect})
		return script[len(seen)-1](s)
	})
	if !errors.Is(err, refused) {
		t.Fatalf("Run = %v, want the permanent error", err)
	}
	if lost != len(script) {
		t.Errorf("%d sessions reported lost, want %d", lost, len(script))
	}
	wantSeen := []Session{{0, false, false}, {1, true, false}, {2, true, false}, {1, true, false}, {2, true, false}}
	if diff := cmp.Diff(wantSeen, seen, cmp.AllowUnexported(Session{})); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}
	// The live session resets the backoff: 0.5 s, 1 s, then 0.5 s again.
	want := []time.Duration{500 * time.Millisecond, time.Second, 500 * time.Millisecond, time.Second}
	if diff := cmp.Diff(want, delays); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	err := Run(ctx, Config{Sleep: func(context.Context, time.Duration) error { return nil }},
		func(context.Context, *Session) error {
			calls++
			if calls == 3 {
				cancel()
			}
			return errors.New("dropped")
		})
	if err != nil || calls != 3 {
		t.Fatalf("Run = %v after %d sessions, want nil after 3", err, calls)
	}
}

func TestPermanent(t *testing.T) {
	for code, want := range map[exgate.Code]bool{
		exgate.CodeExchangeAuthFailed:  true,
		exgate.CodePermissionDenied:    true,
		exgate.CodeUnknownSymbol:       true,
		exgate.CodeExchangeUnavailable: false,
		exgate.CodeRateLimited:         false,
	} {
		if got := Permanent(exgate.Errorf(code, "x")); got != want {
			t.Errorf("Permanent(%s) = %v, want %v", code, got, want)
		}
	}
	if Permanent(errors.New("eof")) {
		t.Error("Permanent(plain error) = true")
	}
}

func TestBook(t *testing.T) {
	var b Book
	steps := []struct {
		side            Side
		price, quantity string
	}{
		{Bid, "100.1", "1"},
		{Bid, "99", "2"},
		{Bid, "100.5", "3"},
		{Ask, "101", "1"},
		{Ask, "100.9", "0.5"},
		{Ask, "1.02e2", "4"},
		{Bid, "100.10", "7"}, // the same level as 100.1
		{Bid, "99.0", "0"},   // removes 99
		{Ask, "105", "0"},    // removing an absent level changes nothing
	}
	for _, s := range steps {
		if err := b.Set(s.side, s.price, s.quantity); err != nil {
			t.Fatalf("Set(%v, %s, %s): %v", s.side, s.price, s.quantity, err)
		}
	}
	want := exgate.OrderBook{
		Bids: []exgate.Level{{Price: "100.5", Quantity: "3"}, {Price: "100.10", Quantity: "7"}},
		Asks: []exgate.Level{{Price: "100.9", Quantity: "0.5"}, {Price: "101", Quantity: "1"}, {Price: "102", Quantity: "4"}},
	}
	if diff := cmp.Diff(want, b.Snapshot(0)); diff != "" {
		t.Errorf("book (-want +got):\n%s", diff)
	}
	if got := b.Snapshot(1); len(got.Bids) != 1 || len(got.Asks) != 1 || got.Asks[0].Price != "100.9" {
		t.Errorf("Snapshot(1) = %+v", got)
	}
	if b.Crossed() {
		t.Error("Crossed on a consistent book")
	}
	b.Truncate(2)
	if got := b.Levels(Ask, 0); len(got) != 2 {
		t.Errorf("after Truncate(2), asks = %v", got)
	}
	if err := b.Set(Bid, "101", "1"); err != nil || !b.Crossed() {
		t.Errorf("a bid at the best ask: Set = %v, Crossed = %v", err, b.Crossed())
	}
	for _, bad := range [][2]string{{"x", "1"}, {"1", "y"}, {"1", "-1"}, {"0", "1"}} {
		if err := b.Set(Ask, bad[0], bad[1]); err == nil {
			t.Errorf("Set(%q, %q) accepted", bad[0], bad[1])
		}
	}
	b.Reset()
	if got := b.Snapshot(0); len(got.Bids)+len(got.Asks) != 0 {
		t.Errorf("after Reset: %+v", got)
	}
}
