// Package localstate keeps the gateway's shared state in process: rate
// limits (GCRA) with pauses, exchange nonces, the replay guard and a small
// cache. It is the single-instance default; package redis implements the
// same methods for several instances sharing one Redis, and package
// statetest holds both to the same behaviour.
//
// Every type is safe for concurrent use. Entries expire on the injected
// clock and are swept in amortized constant time, so no map grows without
// bound.
package localstate

import "time"

// minSweep is the smallest table size at which expired entries are swept.
const minSweep = 1024

// entry is a value that is dead from expires on.
type entry[V any] struct {
	value   V
	expires time.Time
}

// table is a map whose entries expire. Expired entries are swept when the
// map has doubled since the last sweep, and only when one may have expired
// (earliest), so a full table of live entries is not rescanned on every
// insert.
type table[V any] struct {
	entries  map[string]entry[V]
	cap      int       // most entries held
	sweepAt  int       // size at which the next insert sweeps
	earliest time.Time // no entry expires before this
}

func newTable[V any](capacity int) table[V] {
	return table[V]{entries: map[string]entry[V]{}, cap: capacity, sweepAt: min(minSweep, capacity)}
}

// get returns key's value when it is live at now.
func (t *table[V]) get(key string, now time.Time) (V, bool) {
	e, ok := t.entries[key]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// put stores value under key until expires. It reports false, storing
// nothing, when the table holds cap live entries and key is not one of
// them.
func (t *table[V]) put(key string, value V, expires, now time.Time) bool {
	if _, ok := t.entries[key]; !ok && len(t.entries) >= t.sweepAt {
		if !now.Before(t.earliest) {
			t.sweep(now)
		}
		if len(t.entries) >= t.cap {
			return false
		}
	}
	if len(t.entries) == 0 || expires.Before(t.earliest) {
		t.earliest = expires
	}
	t.entries[key] = entry[V]{value: value, expires: expires}
	return true
}

// sweep deletes the entries dead at now and sets the next sweep size.
func (t *table[V]) sweep(now time.Time) {
	var earliest time.Time
	for k, e := range t.entries {
		switch {
		case !now.Before(e.expires):
			delete(t.entries, k)
		case earliest.IsZero() || e.expires.Before(earliest):
			earliest = e.expires
		}
	}
	t.earliest = earliest
	t.sweepAt = min(max(minSweep, 2*len(t.entries)), t.cap)
}

// evict deletes about an eighth of the entries, whichever the map yields
// first, to make room in a full cache.
func (t *table[V]) evict() {
	n := max(len(t.entries)/8, 1)
	for k := range t.entries {
		delete(t.entries, k)
		if n--; n == 0 {
			break
		}
	}
}
