package stream

import (
	"sync"
	"time"

	"github.com/exgate/exgate"
)

// pacer keeps a book topic to exgate.StreamBookRate snapshots in any
// second (docs/contract.md 2.5). It paces the upstream once for all its
// subscribers: every subscriber gets the same snapshots (each cut to its
// depth), a subsequence of those the pacer let through, so each
// subscription keeps to the rate, and one timer serves them all. A
// snapshot that comes too soon waits, replaced by any newer one, and the
// latest goes out as soon as the rate allows (fire): never a stale one
// after a newer one, and the last state always arrives.
type pacer struct {
	clock Clock
	fire  func()

	mu sync.Mutex
	// sent holds the times of the last StreamBookRate snapshots let
	// through, a ring whose next slot (next) is the oldest.
	sent    [exgate.StreamBookRate]time.Time
	next    int
	armed   bool
	cancel  func() bool
	stopped bool
}

func newPacer(clock Clock, fire func()) *pacer {
	return &pacer{clock: clock, fire: fire}
}

// admit reports whether a snapshot of time at may go out now, recording it
// if so; if not, fire is called once the rate allows.
func (p *pacer) admit(at time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || p.armed {
		return false
	}
	if oldest := p.sent[p.next]; !oldest.IsZero() {
		if w := oldest.Add(time.Second).Sub(at); w > 0 {
			p.armed = true
			p.cancel = p.clock.AfterFunc(w, p.timer)
			return false
		}
	}
	p.sent[p.next] = at
	p.next = (p.next + 1) % len(p.sent)
	return true
}

func (p *pacer) timer() {
	p.mu.Lock()
	p.armed = false
	stopped := p.stopped
	p.mu.Unlock()
	if !stopped {
		p.fire()
	}
}

func (p *pacer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.cancel != nil {
		p.cancel()
	}
}
