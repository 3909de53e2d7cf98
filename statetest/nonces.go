package statetest

import (
	"math"
	"sync"
	"testing"
)

// RunNonces checks Nonces: values start at 1, respect the floor, are
// exact across the whole int64 range, fail when exhausted, are isolated
// per key, and under concurrency are all distinct and increase for every
// caller. newNonces returns fresh, empty Nonces once per subtest.
func RunNonces(t *testing.T, newNonces func(t *testing.T) Nonces) {
	t.Helper()
	type call struct {
		key   string
		floor int64
		want  int64
	}
	tests := []struct {
		name  string
		calls []call
	}{
		{"counts from 1", []call{{"k", 0, 1}, {"k", 0, 2}, {"k", 0, 3}}},
		{"a negative floor is below 1", []call{{"k", -5, 1}, {"k", math.MinInt64, 2}}},
		{"floor", []call{{"k", 1000, 1000}, {"k", 0, 1001}, {"k", 500, 1002}, {"k", 1002, 1003}, {"k", 5000, 5000}}},
		{"floor equal to the next value", []call{{"k", 0, 1}, {"k", 2, 2}, {"k", 3, 3}}},
		{"keys are isolated", []call{{"a", 100, 100}, {"b", 0, 1}, {"a", 0, 101}, {"b", 0, 2}}},
		{"exact beyond 2^53", []call{{"k", 1<<53 + 1, 1<<53 + 1}, {"k", 0, 1<<53 + 2}, {"k", 1<<62 + 3, 1<<62 + 3}, {"k", 0, 1<<62 + 4}}},
		{"more digits than the current value", []call{{"k", 99, 99}, {"k", 100, 100}, {"k", 1000, 1000}, {"k", 999, 1001}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := newNonces(t)
			for i, c := range tc.calls {
				got, err := n.Next(t.Context(), c.key, c.floor)
				if err != nil || got != c.want {
					t.Fatalf("call %d: Next(%q, %d) = %d, %v; want %d, nil", i, c.key, c.floor, got, err, c.want)
				}
			}
		})
	}

	t.Run("exhausted at the largest int64", func(t *testing.T) {
		ctx := t.Context()
		n := newNonces(t)
		if got, err := n.Next(ctx, "k", math.MaxInt64); err != nil || got != math.MaxInt64 {
			t.Fatalf("Next(MaxInt64) = %d, %v; want %d, nil", got, err, int64(math.MaxInt64))
		}
		if got, err := n.Next(ctx, "k", 0); err == nil {
			t.Fatalf("Next after MaxInt64 = %d, nil; want an error", got)
		}
		if got, err := n.Next(ctx, "other", 0); err != nil || got != 1 {
			t.Fatalf("Next(other) = %d, %v; want 1, nil", got, err)
		}
	})

	t.Run("concurrent callers get distinct increasing values", func(t *testing.T) {
		ctx := t.Context()
		n := newNonces(t)
		const callers, each = 200, 5
		got := make([][]int64, callers)
		errs := make(chan error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				for j := range each {
					// Some callers raise the floor, as a clock would.
					floor := int64(0)
					if i%10 == 0 {
						floor = int64(100 * (i + j))
					}
					v, err := n.Next(ctx, "k", floor)
					if err != nil {
						errs <- err
						return
					}
					if v < floor {
						t.Errorf("Next(floor %d) = %d, below the floor", floor, v)
					}
					got[i] = append(got[i], v)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("Next = %v", err)
		}
		seen := map[int64]int{}
		for i, vs := range got {
			for j, v := range vs {
				if j > 0 && v <= vs[j-1] {
					t.Errorf("caller %d: value %d after %d, not increasing", i, v, vs[j-1])
				}
				if other, dup := seen[v]; dup {
					t.Errorf("value %d handed to callers %d and %d", v, other, i)
				}
				seen[v] = i
			}
		}
		if len(seen) != callers*each {
			t.Errorf("%d distinct values; want %d", len(seen), callers*each)
		}
	})
}
