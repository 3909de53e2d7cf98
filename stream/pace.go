package stream

import (
	"sync"
	"time"

	"github.com/exgate/exgate"
)

// pacer passes a book subscription's snapshots on at most
// exgate.StreamBookRate times in any second (docs/contract.md 2.5). A
// snapshot that comes too soon waits, replaced by any newer one, and is
// sent as soon as the rate allows: the latest book always arrives, never a
// stale one after a newer one.
type pacer struct {
	clock Clock
	send  func([]byte)

	mu sync.Mutex
	// sent holds the times of the last StreamBookRate sends, a ring
	// whose next slot (next) is the oldest.
	sent    [exgate.StreamBookRate]time.Time
	next    int
	pending []byte
	armed   bool
	cancel  func() bool
	stopped bool
}

func newPacer(clock Clock, send func([]byte)) *pacer {
	return &pacer{clock: clock, send: send}
}

// wait is how long until another send keeps to the rate.
func (p *pacer) wait(now time.Time) time.Duration {
	oldest := p.sent[p.next]
	if oldest.IsZero() {
		return 0
	}
	return max(0, oldest.Add(time.Second).Sub(now))
}

func (p *pacer) record(now time.Time) {
	p.sent[p.next] = now
	p.next = (p.next + 1) % len(p.sent)
}

// offer passes msg on now or as soon as the rate allows.
func (p *pacer) offer(msg []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	if p.armed {
		p.pending = msg // the timer sends the latest
		return
	}
	now := p.clock.Now()
	if w := p.wait(now); w > 0 {
		p.pending, p.armed = msg, true
		p.cancel = p.clock.AfterFunc(w, p.fire)
		return
	}
	p.record(now)
	p.send(msg)
}

func (p *pacer) fire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = false
	if p.stopped || p.pending == nil {
		return
	}
	now := p.clock.Now()
	if w := p.wait(now); w > 0 {
		p.armed = true
		p.cancel = p.clock.AfterFunc(w, p.fire)
		return
	}
	msg := p.pending
	p.pending = nil
	p.record(now)
	p.send(msg)
}

func (p *pacer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped, p.pending = true, nil
	if p.cancel != nil {
		p.cancel()
	}
}
