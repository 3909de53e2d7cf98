package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
)

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	tests := []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"peer", "192.0.2.1:5555", nil, "192.0.2.1"},
		{"untrusted peer's header ignored", "192.0.2.1:5555", []string{"203.0.113.7"}, "192.0.2.1"},
		{"trusted peer, one hop", "10.0.0.2:5555", []string{"203.0.113.7"}, "203.0.113.7"},
		{"right-most untrusted", "10.0.0.2:5555", []string{"203.0.113.7, 198.51.100.1"}, "198.51.100.1"},
		{"trusted hops skipped", "10.0.0.2:5555", []string{"203.0.113.7, 10.0.0.9"}, "203.0.113.7"},
		{"several header lines are one list", "10.0.0.2:5555", []string{"203.0.113.7", "10.0.0.9"}, "203.0.113.7"},
		{"all trusted: the left-most", "10.0.0.2:5555", []string{"10.0.0.7, 10.0.0.9"}, "10.0.0.7"},
		{"trusted peer without header", "10.0.0.2:5555", nil, "10.0.0.2"},
		{"IPv6 peer", "[::1]:5555", []string{"2001:db8::5"}, "2001:db8::5"},
		{"IPv4-mapped peer", "[::ffff:192.0.2.1]:5555", nil, "192.0.2.1"},
		{"hop with a port", "10.0.0.2:5555", []string{"203.0.113.7:1234"}, "203.0.113.7"},
		{"nonsense from a trusted proxy", "10.0.0.2:5555", []string{"203.0.113.7, bogus"}, "invalid IP"},
		{"unreadable peer", "pipe", nil, "invalid IP"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientAddr(r, trusted).String(); got != tc.want {
				t.Errorf("clientAddr = %s, want %s", got, tc.want)
			}
		})
	}
}

// batchLog records the batches it is given; the first one waits for
// release.
type batchLog struct {
	mu      sync.Mutex
	batches [][]string
	started chan struct{}
	release chan struct{}
}

func (l *batchLog) AppendAudits(_ context.Context, es []exgate.AuditEntry) error {
	l.mu.Lock()
	first := len(l.batches) == 0
	var ids []string
	for _, e := range es {
		ids = append(ids, e.RequestID)
	}
	l.batches = append(l.batches, ids)
	l.mu.Unlock()
	if first {
		close(l.started)
		<-l.release
	}
	return nil
}

// TestAuditWriter: records queued while a batch is written go into the
// next batch, in the order they were added, and wait returns once all
// are written.
func TestAuditWriter(t *testing.T) {
	l := &batchLog{started: make(chan struct{}), release: make(chan struct{})}
	w := newAuditWriter(l, slog.New(slog.DiscardHandler), nil)
	w.add(exgate.AuditEntry{RequestID: "r0"})
	<-l.started
	for i := 1; i <= 5; i++ {
		w.add(exgate.AuditEntry{RequestID: fmt.Sprint("r", i)})
	}
	short, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	if err := w.wait(short); err == nil {
		t.Fatal("wait returned while a batch was still being written")
	}
	close(l.release)
	if err := w.wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"r0"}, {"r1", "r2", "r3", "r4", "r5"}}
	l.mu.Lock()
	if diff := cmp.Diff(want, l.batches); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	l.mu.Unlock()
	// The writer stops when idle and starts again for the next record.
	w.add(exgate.AuditEntry{RequestID: "r6"})
	err := w.wait(t.Context())
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || len(l.batches) != 3 {
		t.Errorf("after one more record: %v, batches %v", err, l.batches)
	}
}

// failingLog refuses every write until up is set; each refusal is
// reported on refused.
type failingLog struct {
	mu      sync.Mutex
	up      bool
	written []string
	refused chan int
}

func (l *failingLog) AppendAudits(_ context.Context, es []exgate.AuditEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.up {
		l.refused <- len(es)
		return errors.New("store unreachable")
	}
	for _, e := range es {
		l.written = append(l.written, e.RequestID)
	}
	return nil
}

type auditCounts struct{ failed, dropped atomic.Int64 }

func (c *auditCounts) AuditWriteFailed(n int) { c.failed.Add(int64(n)) }
func (c *auditCounts) AuditDropped(n int)     { c.dropped.Add(int64(n)) }

// TestAuditWriterRetries: a refused batch is written again, in order, once
// the store answers; records past the bounded queue while the store fails
// are dropped and counted, never silently.
func TestAuditWriterRetries(t *testing.T) {
	l := &failingLog{refused: make(chan int, 100)}
	counts := &auditCounts{}
	w := newAuditWriter(l, slog.New(slog.DiscardHandler), counts)
	retry := make(chan struct{})
	w.retry = func(int) time.Duration { <-retry; return 0 }
	w.add(exgate.AuditEntry{RequestID: "r0"})
	if n := <-l.refused; n != 1 {
		t.Fatalf("first write of %d records; want 1", n)
	}
	// The writer waits to write again: fill the queue past its bound.
	for i := 1; i < maxAuditPending+3; i++ {
		w.add(exgate.AuditEntry{RequestID: fmt.Sprint("r", i)})
	}
	if got := counts.dropped.Load(); got != 3 {
		t.Errorf("%d records dropped past the queue's bound; want 3", got)
	}
	if got := w.queued(); got != maxAuditPending {
		t.Errorf("%d records queued; want %d", got, maxAuditPending)
	}
	retry <- struct{}{} // still down
	if n := <-l.refused; n != maxAuditBatch {
		t.Fatalf("second write of %d records; want a batch of %d", n, maxAuditBatch)
	}
	l.mu.Lock()
	l.up = true
	l.mu.Unlock()
	close(retry)
	if err := w.wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.written) != maxAuditPending || l.written[0] != "r0" || l.written[maxAuditPending-1] != fmt.Sprint("r", maxAuditPending-1) {
		t.Fatalf("%d records written (first %q); want r0 to r%d in order", len(l.written), l.written[:1], maxAuditPending-1)
	}
	if got := counts.failed.Load(); got != 1+maxAuditBatch {
		t.Errorf("%d records in failed writes; want %d", got, 1+maxAuditBatch)
	}
}
