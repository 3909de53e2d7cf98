package redis

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLocksExclude: callers on separate Locks values (as on separate
// instances) never hold one key at the same time, and every one gets it.
func TestLocksExclude(t *testing.T) {
	c, prefix := openTest(t)
	const instances, callers, rounds = 3, 8, 10
	locks := make([]*Locks, instances)
	for i := range locks {
		locks[i] = NewLocks(c, prefix)
	}
	var holders, maxHolders, done atomic.Int64
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			for range rounds {
				unlock, err := locks[g%instances].Lock(t.Context(), "k", 5*time.Second)
				if err != nil {
					t.Errorf("Lock: %v", err)
					return
				}
				n := holders.Add(1)
				for m := maxHolders.Load(); n > m && !maxHolders.CompareAndSwap(m, n); m = maxHolders.Load() {
				}
				// A round trip while holding it, so that a second holder
				// would overlap this one.
				if err := c.rdb.Ping(t.Context()).Err(); err != nil {
					t.Errorf("Ping: %v", err)
				}
				holders.Add(-1)
				done.Add(1)
				unlock()
			}
		})
	}
	wg.Wait()
	if maxHolders.Load() != 1 || done.Load() != callers*rounds {
		t.Fatalf("at most %d holders at once, %d locks taken; want 1 and %d", maxHolders.Load(), done.Load(), callers*rounds)
	}
}

// TestLocksKeysAreIndependent: holding one key does not hold another.
func TestLocksKeysAreIndependent(t *testing.T) {
	c, prefix := openTest(t)
	l := NewLocks(c, prefix)
	unlockA, err := l.Lock(t.Context(), "a", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlockA()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	unlockB, err := l.Lock(ctx, "b", 5*time.Second)
	if err != nil {
		t.Fatalf("Lock(b) while a is held: %v", err)
	}
	unlockB()
}

// TestLocksWaitEndsWithContext: a caller waiting for a held lock gives up
// when its ctx is done, with the ctx's error.
func TestLocksWaitEndsWithContext(t *testing.T) {
	c, prefix := openTest(t)
	l := NewLocks(c, prefix)
	unlock, err := l.Lock(t.Context(), "k", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := NewLocks(c, prefix).Lock(ctx, "k", 5*time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock on a held key = %v; want context.DeadlineExceeded", err)
	}
}

// TestLocksExpire: a holder that never unlocks (a dead instance) frees the
// lock after its ttl, and its late unlock does not release the lock the
// next holder took.
func TestLocksExpire(t *testing.T) {
	c, prefix := openTest(t)
	l := NewLocks(c, prefix)
	staleUnlock, err := l.Lock(t.Context(), "k", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	unlock, err := l.Lock(ctx, "k", 5*time.Second) // waits out the ttl
	if err != nil {
		t.Fatalf("Lock after the holder's ttl: %v", err)
	}
	defer unlock()
	staleUnlock()
	short, cancelShort := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancelShort()
	if _, err := l.Lock(short, "k", 5*time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the expired holder's unlock released the new holder's lock (Lock = %v)", err)
	}
}

func TestLocksRefuseNonPositiveTTL(t *testing.T) {
	c, prefix := openTest(t)
	if _, err := NewLocks(c, prefix).Lock(t.Context(), "k", 0); err == nil {
		t.Fatal("Lock with ttl 0 succeeded; want an error")
	}
}
