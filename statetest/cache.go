package statetest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

// RunCache checks a Cache: misses wrap exgate.ErrNotFound, values round
// trip (empty ones too) and are not aliased with the caller's slices,
// entries are replaced, expire, and are deleted by a ttl of 0, and keys
// are isolated. newCache returns a fresh, empty cache and the clock it
// runs on, once per subtest.
func RunCache(t *testing.T, newCache func(t *testing.T) (Cache, Clock)) {
	t.Helper()
	get := func(t *testing.T, c Cache, key string, want []byte) {
		t.Helper()
		got, err := c.Get(t.Context(), key)
		if want == nil {
			if !errors.Is(err, exgate.ErrNotFound) {
				t.Fatalf("Get(%q) = %q, %v; want an error wrapping exgate.ErrNotFound", key, got, err)
			}
			return
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Get(%q) = %q, %v; want %q, nil", key, got, err, want)
		}
	}
	set := func(t *testing.T, c Cache, key string, value []byte, ttl time.Duration) {
		t.Helper()
		if err := c.Set(t.Context(), key, value, ttl); err != nil {
			t.Fatalf("Set(%q) = %v", key, err)
		}
	}

	t.Run("miss", func(t *testing.T) {
		c, _ := newCache(t)
		get(t, c, "absent", nil)
	})

	t.Run("round trip and replace", func(t *testing.T) {
		c, _ := newCache(t)
		set(t, c, "k", []byte(`{"a":1}`), time.Minute)
		get(t, c, "k", []byte(`{"a":1}`))
		set(t, c, "k", []byte("second"), time.Minute)
		get(t, c, "k", []byte("second"))
		set(t, c, "empty", []byte{}, time.Minute)
		get(t, c, "empty", []byte{})
		set(t, c, "binary", []byte{0, 0xff, '\n', 0}, time.Minute)
		get(t, c, "binary", []byte{0, 0xff, '\n', 0})
	})

	t.Run("values are copies", func(t *testing.T) {
		ctx := t.Context()
		c, _ := newCache(t)
		v := []byte("value")
		set(t, c, "k", v, time.Minute)
		v[0] = 'X'
		get(t, c, "k", []byte("value"))
		got, err := c.Get(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		got[0] = 'Y'
		get(t, c, "k", []byte("value"))
	})

	t.Run("keys are isolated", func(t *testing.T) {
		c, _ := newCache(t)
		set(t, c, "a", []byte("A"), time.Minute)
		set(t, c, "b", []byte("B"), time.Minute)
		get(t, c, "a", []byte("A"))
		get(t, c, "b", []byte("B"))
		get(t, c, "c", nil)
	})

	t.Run("expiry", func(t *testing.T) {
		c, clk := newCache(t)
		ttl := 150 * time.Millisecond
		set(t, c, "short", []byte("s"), ttl)
		set(t, c, "long", []byte("l"), time.Minute)
		get(t, c, "short", []byte("s"))
		clk.Advance(ttl)
		get(t, c, "short", nil)
		get(t, c, "long", []byte("l"))
	})

	t.Run("ttl of 0 deletes", func(t *testing.T) {
		c, _ := newCache(t)
		set(t, c, "k", []byte("v"), time.Minute)
		set(t, c, "k", []byte("v"), 0)
		get(t, c, "k", nil)
		set(t, c, "k", []byte("v"), -time.Second)
		get(t, c, "k", nil)
	})
}
