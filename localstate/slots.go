package localstate

import (
	"context"
	"sync"
	"time"
)

// Slots counts holders of a bounded number of slots per key (such as a
// client key's open stream connections), each slot held until its expiry
// unless renewed.
type Slots struct {
	now func() time.Time

	mu    sync.Mutex
	slots map[string]map[string]time.Time
}

// NewSlots returns slots on the clock now (time.Now when nil).
func NewSlots(now func() time.Time) *Slots {
	if now == nil {
		now = time.Now
	}
	return &Slots{now: now, slots: map[string]map[string]time.Time{}}
}

// Acquire takes a slot of key for id until until and reports true, or
// reports false, taking nothing, when limit slots are held (expired ones
// not counted). An id already holding a slot keeps it with the new
// expiry.
func (s *Slots) Acquire(_ context.Context, key, id string, limit int, until time.Time) (bool, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	held := s.slots[key]
	for h, exp := range held {
		if !now.Before(exp) {
			delete(held, h)
		}
	}
	if _, ok := held[id]; !ok && len(held) >= limit {
		return false, nil
	}
	if held == nil {
		held = map[string]time.Time{}
		s.slots[key] = held
	}
	held[id] = until
	return true, nil
}

// Renew keeps id's slot of key until until; a slot that expired is taken
// again whatever the limit (the connection is open).
func (s *Slots) Renew(_ context.Context, key, id string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := s.slots[key]
	if held == nil {
		held = map[string]time.Time{}
		s.slots[key] = held
	}
	held[id] = until
	return nil
}

// Release gives id's slot of key back.
func (s *Slots) Release(_ context.Context, key, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if held := s.slots[key]; held != nil {
		delete(held, id)
		if len(held) == 0 {
			delete(s.slots, key)
		}
	}
	return nil
}
