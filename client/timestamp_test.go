package client

import (
	"testing"
	"time"
)

// TestTimestampsOfClientsSharingAClock: two clients drawing on one clock
// that never repeats a reading never send the same timestamp, even when a
// request of one client takes its timestamp while another request of the
// same client is between reading the clock and recording its own (here
// the clock's first reading runs that other request inside it).
func TestTimestampsOfClientsSharingAClock(t *testing.T) {
	var n int64
	var during func()
	clock := func() time.Time {
		n++
		v := n
		if f := during; f != nil {
			during = nil
			f()
		}
		return time.UnixMilli(v)
	}
	a := New("http://gateway-a", "k", "s", "", WithTimestamps(clock, 0))
	b := New("http://gateway-b", "k", "s", "", WithTimestamps(clock, 0))
	seen := map[int64]string{}
	note := func(who string, ts int64) {
		t.Helper()
		if prev, dup := seen[ts]; dup {
			t.Fatalf("timestamp %d sent by %s and by %s", ts, prev, who)
		}
		seen[ts] = who
	}
	during = func() { note("a (inner)", a.nextTimestamp()) }
	note("a (outer)", a.nextTimestamp())
	note("b", b.nextTimestamp())
	note("a", a.nextTimestamp())
}
