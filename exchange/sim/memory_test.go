package sim_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/sim"
)

func changes(pairs ...string) []exgate.BalanceChange {
	var out []exgate.BalanceChange
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, exgate.BalanceChange{Asset: pairs[i], Delta: dec(pairs[i+1])})
	}
	return out
}

func TestMemoryLedger(t *testing.T) {
	ctx := t.Context()
	clk := &clock{t: testNow}
	l := sim.NewMemoryLedger()
	l.Now = clk.Now
	check := func(t *testing.T, id int64, want map[string]decimal.Decimal) {
		t.Helper()
		got, err := l.SimBalances(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Fatalf("balances (-got +want):\n%s", diff)
		}
	}

	if _, err := l.SimBalances(ctx, 1); !errors.Is(err, exgate.ErrNotFound) {
		t.Fatalf("balances before opening: %v, want ErrNotFound", err)
	}
	if err := l.ApplySimOperation(ctx, 1, exgate.SimOperation{ID: "a", Changes: changes("BTC", "1")}); !errors.Is(err, exgate.ErrNotFound) {
		t.Fatalf("apply before opening: %v, want ErrNotFound", err)
	}
	if err := l.EnsureSimAccount(ctx, 1, changes("BTC", "1", "USDT", "100", "BTC", "1")); err != nil {
		t.Fatal(err)
	}
	if err := l.EnsureSimAccount(ctx, 1, changes("BTC", "5")); err != nil {
		t.Fatal(err)
	}
	check(t, 1, map[string]decimal.Decimal{"BTC": dec("2"), "USDT": dec("100")})
	if err := l.EnsureSimAccount(ctx, 2, changes("BTC", "-1")); err == nil {
		t.Fatal("a negative starting balance was accepted")
	}

	op := exgate.SimOperation{ID: "o1", Kind: exgate.IntentOrder, Changes: changes("USDT", "-99.5", "BTC", "0.001", "BTC", "-0.0005"), Record: []byte(`{"x":1}`)}
	if err := l.ApplySimOperation(ctx, 1, op); err != nil {
		t.Fatal(err)
	}
	check(t, 1, map[string]decimal.Decimal{"BTC": dec("2.0005"), "USDT": dec("0.5")})
	got, err := l.SimOperation(ctx, 1, "o1")
	want := op
	want.CreatedAt = testNow
	if err != nil || !cmp.Equal(got, want) {
		t.Fatalf("SimOperation = %+v, %v; want %+v", got, err, want)
	}
	got.Record[0] = 'X' // the caller's copy
	if again, _ := l.SimOperation(ctx, 1, "o1"); string(again.Record) != `{"x":1}` {
		t.Fatalf("the ledger shares its record with callers: %s", again.Record)
	}

	for name, tc := range map[string]struct {
		id  int64
		op  exgate.SimOperation
		err error
	}{
		"duplicate id":       {1, exgate.SimOperation{ID: "o1", Changes: changes("BTC", "1")}, exgate.ErrConflict},
		"overdraw":           {1, exgate.SimOperation{ID: "o2", Changes: changes("BTC", "1", "USDT", "-0.51")}, exgate.ErrInsufficientFunds},
		"spend a new asset":  {1, exgate.SimOperation{ID: "o3", Changes: changes("SOL", "-1")}, exgate.ErrInsufficientFunds},
		"account not opened": {3, exgate.SimOperation{ID: "o4", Changes: changes("BTC", "1")}, exgate.ErrNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			if err := l.ApplySimOperation(ctx, tc.id, tc.op); !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			check(t, 1, map[string]decimal.Decimal{"BTC": dec("2.0005"), "USDT": dec("0.5")})
			if tc.err != exgate.ErrConflict {
				if _, err := l.SimOperation(ctx, tc.id, tc.op.ID); !errors.Is(err, exgate.ErrNotFound) {
					t.Fatalf("the refused operation was recorded: %v", err)
				}
			}
		})
	}
	if _, err := l.SimOperation(ctx, 2, "o1"); !errors.Is(err, exgate.ErrNotFound) {
		t.Fatalf("operation of another account: %v, want ErrNotFound", err)
	}
}
