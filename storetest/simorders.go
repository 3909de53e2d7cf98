package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

// testSimOpenOperations holds the store to the lifecycle of a resting sim
// order: an operation applied with Open is listed until one closes it in
// the same transaction; a second close conflicts and changes nothing;
// operations are listed by kind newest first.
func (s suite) testSimOpenOperations(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	cred := e.simCredential(t, "olive", "demo")
	if err := e.EnsureSimAccount(ctx, cred.ID, changes(t, "USDT", "1000", "BTC", "1")); err != nil {
		t.Fatal(err)
	}
	ids := func(ops []exgate.SimOperation) []string {
		var out []string
		for _, op := range ops {
			out = append(out, op.ID)
		}
		return out
	}
	check := func(t *testing.T, what string, got []exgate.SimOperation, err error, want ...string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if g := ids(got); len(g) != len(want) || (len(g) > 0 && !equal(g, want)) {
			t.Fatalf("%s = %v, want %v", what, g, want)
		}
	}
	place := func(id string) exgate.SimOperation {
		return exgate.SimOperation{ID: id, Kind: exgate.IntentOrder, Open: true,
			Changes: changes(t, "USDT", "-100"), Record: []byte(`{"id":"` + id + `"}`)}
	}
	for _, id := range []string{"o1", "o2", "o3"} {
		if err := e.ApplySimOperation(ctx, cred.ID, place(id)); err != nil {
			t.Fatalf("open %s: %v", id, err)
		}
		e.clock.Advance(time.Second)
	}
	open, err := e.SimOpenOperations(ctx, cred.ID)
	check(t, "open", open, err, "o3", "o2", "o1")
	if !open[0].Open || string(open[0].Record) != `{"id":"o3"}` || len(open[0].Changes) != 1 {
		t.Errorf("open operation read back as %+v", open[0])
	}

	closeO2 := exgate.SimOperation{ID: "o2.1", Kind: exgate.IntentCancel, Closes: "o2", Changes: changes(t, "USDT", "100")}
	if err := e.ApplySimOperation(ctx, cred.ID, closeO2); err != nil {
		t.Fatalf("close o2: %v", err)
	}
	open, err = e.SimOpenOperations(ctx, cred.ID)
	check(t, "open after close", open, err, "o3", "o1")

	// A second close of o2, under another id, conflicts and moves nothing.
	again := exgate.SimOperation{ID: "o2.2", Kind: exgate.IntentCancel, Closes: "o2", Changes: changes(t, "USDT", "100")}
	if err := e.ApplySimOperation(ctx, cred.ID, again); !errors.Is(err, exgate.ErrConflict) {
		t.Fatalf("second close: %v, want ErrConflict", err)
	}
	if _, err := e.SimOperation(ctx, cred.ID, "o2.2"); !errors.Is(err, exgate.ErrNotFound) {
		t.Fatalf("the refused close was recorded: %v", err)
	}
	e.checkBalances(t, cred.ID, balances(t, "USDT", "800", "BTC", "1"))

	// A close that fails for funds leaves the order open.
	broke := exgate.SimOperation{ID: "o1.1", Kind: exgate.IntentCancel, Closes: "o1", Changes: changes(t, "BTC", "-5")}
	if err := e.ApplySimOperation(ctx, cred.ID, broke); !errors.Is(err, exgate.ErrInsufficientFunds) {
		t.Fatalf("close without funds: %v", err)
	}
	open, err = e.SimOpenOperations(ctx, cred.ID)
	check(t, "open after a failed close", open, err, "o3", "o1")

	orders, err := e.SimOperations(ctx, cred.ID, exgate.IntentOrder, 0)
	check(t, "orders", orders, err, "o3", "o2", "o1")
	orders, err = e.SimOperations(ctx, cred.ID, exgate.IntentOrder, 2)
	check(t, "orders limit 2", orders, err, "o3", "o2")
	cancels, err := e.SimOperations(ctx, cred.ID, exgate.IntentCancel, 0)
	check(t, "cancels", cancels, err, "o2.1")

	// Another instance sees the same.
	st2 := e.reopen(t)
	open, err = st2.SimOpenOperations(ctx, cred.ID)
	check(t, "open from another instance", open, err, "o3", "o1")
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
