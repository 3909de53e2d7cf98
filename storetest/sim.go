package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// dec parses a decimal in test data.
func dec(t *testing.T, s string) decimal.Decimal {
	t.Helper()
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("bad decimal %q in test: %v", s, err)
	}
	return d
}

// changes builds balance changes from asset, delta pairs.
func changes(t *testing.T, pairs ...string) []exgate.BalanceChange {
	t.Helper()
	var out []exgate.BalanceChange
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, exgate.BalanceChange{Asset: pairs[i], Delta: dec(t, pairs[i+1])})
	}
	return out
}

// balances builds a balance map from asset, amount pairs.
func balances(t *testing.T, pairs ...string) map[string]decimal.Decimal {
	t.Helper()
	out := map[string]decimal.Decimal{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[pairs[i]] = dec(t, pairs[i+1])
	}
	return out
}

// simCredential adds a sim credential named name for a new client key.
func (e env) simCredential(t *testing.T, apiKey, name string) exgate.Credential {
	t.Helper()
	ctx := t.Context()
	if _, err := e.ClientKey(ctx, apiKey); errors.Is(err, exgate.ErrNotFound) {
		if err := e.CreateClientKey(ctx, exgate.ClientKey{APIKey: apiKey, Secret: "s"}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := e.AddCredential(ctx, exgate.Credential{ClientAPIKey: apiKey, Name: name, Exchange: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e env) checkBalances(t *testing.T, credentialID int64, want map[string]decimal.Decimal) {
	t.Helper()
	got, err := e.SimBalances(t.Context(), credentialID)
	if err != nil {
		t.Fatalf("SimBalances(%d): %v", credentialID, err)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Fatalf("SimBalances(%d) (-got +want):\n%s", credentialID, diff)
	}
}

func (s suite) testSimLedger(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	cred := e.simCredential(t, "alice", "demo")
	other := e.simCredential(t, "alice", "demo2")
	unopened := e.simCredential(t, "alice", "demo3")
	initial := changes(t, "BTC", "10", "USDT", "100000", "ETH", "0")

	t.Run("ensure", func(t *testing.T) {
		if err := e.EnsureSimAccount(ctx, cred.ID, initial); err != nil {
			t.Fatalf("EnsureSimAccount: %v", err)
		}
		e.checkBalances(t, cred.ID, balances(t, "BTC", "10", "USDT", "100000", "ETH", "0"))
		if err := e.EnsureSimAccount(ctx, other.ID, nil); err != nil {
			t.Fatalf("EnsureSimAccount without balances: %v", err)
		}
		e.checkBalances(t, other.ID, balances(t))
	})

	buy := exgate.SimOperation{
		ID:      "buy-1",
		Kind:    exgate.IntentOrder,
		Changes: changes(t, "USDT", "-50123.45", "BTC", "0.99", "BNB", "0.0125"),
		Record:  []byte(`{"clientOrderId":"buy-1","status":"FILLED"}`),
	}
	t.Run("apply", func(t *testing.T) {
		if err := e.ApplySimOperation(ctx, cred.ID, buy); err != nil {
			t.Fatalf("ApplySimOperation: %v", err)
		}
		e.checkBalances(t, cred.ID, balances(t, "BTC", "10.99", "USDT", "49876.55", "ETH", "0", "BNB", "0.0125"))
		got, err := e.SimOperation(ctx, cred.ID, "buy-1")
		if err != nil {
			t.Fatalf("SimOperation: %v", err)
		}
		want := buy
		want.CreatedAt = startTime()
		if diff := cmp.Diff(got, want); diff != "" {
			t.Fatalf("SimOperation (-got +want):\n%s", diff)
		}
	})

	t.Run("ensure again changes nothing", func(t *testing.T) {
		if err := e.EnsureSimAccount(ctx, cred.ID, changes(t, "BTC", "1", "DOGE", "5")); err != nil {
			t.Fatalf("EnsureSimAccount again: %v", err)
		}
		e.checkBalances(t, cred.ID, balances(t, "BTC", "10.99", "USDT", "49876.55", "ETH", "0", "BNB", "0.0125"))
	})

	t.Run("errors change nothing", func(t *testing.T) {
		overdraw := exgate.SimOperation{
			ID:      "sell-1",
			Kind:    exgate.IntentOrder,
			Changes: changes(t, "USDT", "1000", "BTC", "-10.99000001"),
		}
		newAsset := exgate.SimOperation{ID: "w-1", Kind: exgate.IntentWithdrawal, Changes: changes(t, "SOL", "-1")}
		dupID := exgate.SimOperation{ID: "buy-1", Kind: exgate.IntentOrder, Changes: changes(t, "BTC", "1")}
		tests := []struct {
			name string
			id   int64
			op   exgate.SimOperation
			want error
		}{
			{"overdraw", cred.ID, overdraw, exgate.ErrInsufficientFunds},
			{"overdraw an asset never held", cred.ID, newAsset, exgate.ErrInsufficientFunds},
			{"duplicate id", cred.ID, dupID, exgate.ErrConflict},
			{"account not opened", unopened.ID, dupID, exgate.ErrNotFound},
			{"unknown credential", 1 << 40, dupID, exgate.ErrNotFound},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				err := e.ApplySimOperation(ctx, tc.id, tc.op)
				if !errors.Is(err, tc.want) {
					t.Fatalf("ApplySimOperation error = %v, want %v", err, tc.want)
				}
			})
		}
		e.checkBalances(t, cred.ID, balances(t, "BTC", "10.99", "USDT", "49876.55", "ETH", "0", "BNB", "0.0125"))
		if _, err := e.SimOperation(ctx, cred.ID, "sell-1"); !errors.Is(err, exgate.ErrNotFound) {
			t.Fatalf("refused operation was recorded: %v", err)
		}
		got, err := e.SimOperation(ctx, cred.ID, "buy-1")
		if err != nil || !got.Changes[0].Delta.Equal(dec(t, "-50123.45")) {
			t.Fatalf("SimOperation(buy-1) after a duplicate = %+v, %v; want the first", got, err)
		}
	})

	t.Run("refused id can be used later", func(t *testing.T) {
		op := exgate.SimOperation{ID: "sell-1", Kind: exgate.IntentOrder, Changes: changes(t, "USDT", "1000", "BTC", "-10.99")}
		e.clock.Advance(time.Hour)
		if err := e.ApplySimOperation(ctx, cred.ID, op); err != nil {
			t.Fatalf("ApplySimOperation: %v", err)
		}
		e.checkBalances(t, cred.ID, balances(t, "BTC", "0", "USDT", "50876.55", "ETH", "0", "BNB", "0.0125"))
		got, err := e.SimOperation(ctx, cred.ID, "sell-1")
		if err != nil || !got.CreatedAt.Equal(e.clock.Now()) || got.Record != nil {
			t.Fatalf("SimOperation = %+v, %v; want CreatedAt from the clock, no record", got, err)
		}
	})

	t.Run("net change per asset", func(t *testing.T) {
		// BTC is 0: spending it first and receiving it back in the same
		// operation nets to zero.
		op := exgate.SimOperation{ID: "net-1", Kind: exgate.IntentOrder, Changes: changes(t, "BTC", "-1", "BTC", "1.5", "BTC", "-0.5")}
		if err := e.ApplySimOperation(ctx, cred.ID, op); err != nil {
			t.Fatalf("ApplySimOperation: %v", err)
		}
		e.checkBalances(t, cred.ID, balances(t, "BTC", "0", "USDT", "50876.55", "ETH", "0", "BNB", "0.0125"))
	})

	t.Run("ids are per credential", func(t *testing.T) {
		op := exgate.SimOperation{ID: "buy-1", Kind: exgate.IntentOrder, Changes: changes(t, "XRP", "3")}
		if err := e.ApplySimOperation(ctx, other.ID, op); err != nil {
			t.Fatalf("ApplySimOperation on another credential: %v", err)
		}
		e.checkBalances(t, other.ID, balances(t, "XRP", "3"))
	})

	t.Run("read errors", func(t *testing.T) {
		tests := []struct {
			name string
			err  error
		}{
			{"operation unknown", second(e.SimOperation(ctx, cred.ID, "nope"))},
			{"operation of another credential", second(e.SimOperation(ctx, unopened.ID, "buy-1"))},
			{"balances not opened", second(e.SimBalances(ctx, unopened.ID))},
			{"balances unknown credential", second(e.SimBalances(ctx, 1<<40))},
			{"ensure unknown credential", e.EnsureSimAccount(ctx, 1<<40, initial)},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if !errors.Is(tc.err, exgate.ErrNotFound) {
					t.Fatalf("error = %v, want ErrNotFound", tc.err)
				}
			})
		}
	})

	t.Run("removing the credential removes the ledger", func(t *testing.T) {
		if err := e.RemoveCredential(ctx, "alice", "demo2"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.SimBalances(ctx, other.ID); !errors.Is(err, exgate.ErrNotFound) {
			t.Fatalf("SimBalances after remove: %v, want ErrNotFound", err)
		}
		if _, err := e.SimOperation(ctx, other.ID, "buy-1"); !errors.Is(err, exgate.ErrNotFound) {
			t.Fatalf("SimOperation after remove: %v, want ErrNotFound", err)
		}
		e.checkBalances(t, cred.ID, balances(t, "BTC", "0", "USDT", "50876.55", "ETH", "0", "BNB", "0.0125"))
	})
}

// testSimExactDecimals checks that balances never pass through binary
// floating point: a float would turn ten additions of 0.1 into
// 0.9999999999999999, and lose digits past its 53-bit mantissa.
func (s suite) testSimExactDecimals(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	cred := e.simCredential(t, "alice", "demo")
	if err := e.EnsureSimAccount(ctx, cred.ID, changes(t, "BTC", "0.1", "USDT", "12345678901234567890.123456789012345678")); err != nil {
		t.Fatal(err)
	}
	for i := range 9 {
		op := exgate.SimOperation{ID: fmt.Sprintf("add-%d", i), Kind: exgate.IntentOrder, Changes: changes(t, "BTC", "0.1", "USDT", "-0.000000000000000001")}
		if err := e.ApplySimOperation(ctx, cred.ID, op); err != nil {
			t.Fatal(err)
		}
	}
	e.checkBalances(t, cred.ID, balances(t, "BTC", "1", "USDT", "12345678901234567890.123456789012345669"))
	raw := e.rawQuery(t, "SELECT asset, amount FROM sim_balances ORDER BY asset")
	want := [][]string{{"BTC", "1"}, {"USDT", "12345678901234567890.123456789012345669"}}
	if diff := cmp.Diff(raw, want); diff != "" {
		t.Fatalf("stored balances (-got +want):\n%s", diff)
	}
}

// testConcurrentSimSpending races more spending than the balance holds
// from two instances: the balance ends at zero, never below, and exactly
// the affordable operations succeed.
func (s suite) testConcurrentSimSpending(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	cred := e.simCredential(t, "alice", "demo")
	if err := e.EnsureSimAccount(ctx, cred.ID, changes(t, "BTC", "10", "USDT", "0")); err != nil {
		t.Fatal(err)
	}
	stores := []exgate.Store{e.Store, e.reopen(t)}
	const n = 50 // each spends 1 BTC of 10
	errs := make([]error, n)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	spend := changes(t, "BTC", "-1", "USDT", "100.5")
	for i := range n {
		op := exgate.SimOperation{ID: fmt.Sprintf("sell-%02d", i), Kind: exgate.IntentOrder, Changes: spend}
		wg.Go(func() {
			<-ready
			errs[i] = stores[i%len(stores)].ApplySimOperation(ctx, cred.ID, op)
		})
	}
	close(ready)
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, exgate.ErrInsufficientFunds):
			t.Errorf("operation %d: error = %v, want nil or ErrInsufficientFunds", i, err)
		}
	}
	if ok != 10 {
		t.Fatalf("%d operations succeeded, want 10", ok)
	}
	e.checkBalances(t, cred.ID, balances(t, "BTC", "0", "USDT", "1005"))
}
