package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
)

// walletChange is one balance change in a wallet.
func walletChange(t *testing.T, wallet exgate.WalletKind, asset, delta string) exgate.BalanceChange {
	t.Helper()
	return exgate.BalanceChange{Asset: asset, Delta: dec(t, delta), Wallet: wallet}
}

func (e env) checkWallet(t *testing.T, credentialID int64, wallet exgate.WalletKind, want map[string]string) {
	t.Helper()
	got, err := e.SimWalletBalances(t.Context(), credentialID, wallet)
	if err != nil {
		t.Fatalf("SimWalletBalances(%d, %s): %v", credentialID, wallet, err)
	}
	w := balances(t)
	for asset, amount := range want {
		w[asset] = dec(t, amount)
	}
	if diff := cmp.Diff(got, w); diff != "" {
		t.Fatalf("SimWalletBalances(%d, %s) (-got +want):\n%s", credentialID, wallet, diff)
	}
}

// testSimWallets holds the paper ledger's two wallets (docs/contract.md
// 2.10): balances are kept per wallet, a transfer moves them atomically,
// a wallet never goes negative, and spot is what SimBalances reads.
func (s suite) testSimWallets(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	cred := e.simCredential(t, "alice", "demo")
	if err := e.EnsureSimAccount(ctx, cred.ID, changes(t, "BTC", "10", "USDT", "100")); err != nil {
		t.Fatal(err)
	}
	e.checkWallet(t, cred.ID, exgate.WalletSpot, map[string]string{"BTC": "10", "USDT": "100"})
	e.checkWallet(t, cred.ID, exgate.WalletFunding, nil)

	out := exgate.SimOperation{ID: "t-1", Kind: exgate.IntentTransfer, Record: []byte(`{"id":"t-1"}`), Changes: []exgate.BalanceChange{
		walletChange(t, exgate.WalletSpot, "BTC", "-2.5"), walletChange(t, exgate.WalletFunding, "BTC", "2.5"),
	}}
	if err := e.ApplySimOperation(ctx, cred.ID, out); err != nil {
		t.Fatalf("transfer to funding: %v", err)
	}
	e.checkWallet(t, cred.ID, exgate.WalletSpot, map[string]string{"BTC": "7.5", "USDT": "100"})
	e.checkWallet(t, cred.ID, exgate.WalletFunding, map[string]string{"BTC": "2.5"})
	e.checkBalances(t, cred.ID, balances(t, "BTC", "7.5", "USDT", "100"))
	got, err := e.SimOperation(ctx, cred.ID, "t-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got.Changes, out.Changes); diff != "" {
		t.Fatalf("the transfer's changes read back (-got +want):\n%s", diff)
	}

	t.Run("a wallet never goes negative", func(t *testing.T) {
		over := exgate.SimOperation{ID: "t-over", Kind: exgate.IntentTransfer, Changes: []exgate.BalanceChange{
			walletChange(t, exgate.WalletFunding, "BTC", "-2.6"), walletChange(t, exgate.WalletSpot, "BTC", "2.6"),
		}}
		if err := e.ApplySimOperation(ctx, cred.ID, over); !errors.Is(err, exgate.ErrInsufficientFunds) {
			t.Fatalf("transfer of more than funding holds: %v, want ErrInsufficientFunds", err)
		}
		e.checkWallet(t, cred.ID, exgate.WalletSpot, map[string]string{"BTC": "7.5", "USDT": "100"})
		e.checkWallet(t, cred.ID, exgate.WalletFunding, map[string]string{"BTC": "2.5"})
	})

	t.Run("an unknown wallet is refused", func(t *testing.T) {
		bad := exgate.SimOperation{ID: "t-bad", Kind: exgate.IntentTransfer, Changes: []exgate.BalanceChange{
			walletChange(t, "margin", "BTC", "1"),
		}}
		if err := e.ApplySimOperation(ctx, cred.ID, bad); err == nil {
			t.Fatal("a change in an unknown wallet was applied")
		}
	})

	t.Run("concurrent transfers", func(t *testing.T) {
		// 20 transfers of 0.5 BTC from funding (2.5): exactly 5 pass.
		var wg sync.WaitGroup
		var mu sync.Mutex
		passed := 0
		for i := range 20 {
			wg.Go(func() {
				op := exgate.SimOperation{ID: fmt.Sprintf("t-c%d", i), Kind: exgate.IntentTransfer, Changes: []exgate.BalanceChange{
					walletChange(t, exgate.WalletFunding, "BTC", "-0.5"), walletChange(t, exgate.WalletSpot, "BTC", "0.5"),
				}}
				err := e.ApplySimOperation(ctx, cred.ID, op)
				if err != nil && !errors.Is(err, exgate.ErrInsufficientFunds) {
					t.Errorf("transfer %d: %v", i, err)
				}
				if err == nil {
					mu.Lock()
					passed++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if passed != 5 {
			t.Fatalf("%d transfers of 0.5 out of 2.5 passed, want 5", passed)
		}
		e.checkWallet(t, cred.ID, exgate.WalletSpot, map[string]string{"BTC": "10", "USDT": "100"})
		e.checkWallet(t, cred.ID, exgate.WalletFunding, map[string]string{"BTC": "0"})
	})
}

// testExclusiveIntents holds exgate.Intent.Exclusive: no two intents hold
// one key while their outcome is open (submitting or unknown); once one
// is accepted or final, the key is free again.
func (s suite) testExclusiveIntents(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	first := intent("x-1", "alice", "ref-1")
	first.Kind, first.Exclusive = exgate.IntentTransfer, "transfer/1/BTC/1"
	if err := e.CreateIntent(ctx, first); err != nil {
		t.Fatal(err)
	}
	second := intent("x-2", "alice", "ref-2")
	second.Kind, second.Exclusive = exgate.IntentTransfer, first.Exclusive
	if err := e.CreateIntent(ctx, second); !errors.Is(err, exgate.ErrConflict) {
		t.Fatalf("a second intent with a held key: %v, want ErrConflict", err)
	}
	if _, err := e.Intent(ctx, "x-2"); !errors.Is(err, exgate.ErrNotFound) {
		t.Fatalf("the refused intent was recorded: %v", err)
	}
	other := intent("x-3", "alice", "ref-3")
	other.Kind, other.Exclusive = exgate.IntentTransfer, "transfer/1/BTC/2"
	if err := e.CreateIntent(ctx, other); err != nil {
		t.Fatalf("an intent with another key: %v", err)
	}
	if err := e.UpdateIntent(ctx, "x-1", exgate.IntentOutcome{State: exgate.IntentUnknown, Answer: exgate.AnswerPending, Response: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateIntent(ctx, second); !errors.Is(err, exgate.ErrConflict) {
		t.Fatalf("a second intent while the first is unknown: %v, want ErrConflict", err)
	}
	if err := e.UpdateIntent(ctx, "x-1", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerRecord, Response: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateIntent(ctx, second); err != nil {
		t.Fatalf("a second intent once the first is final: %v", err)
	}
	// Concurrent holders of one key: exactly one is recorded.
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 10 {
		wg.Go(func() {
			in := intent(fmt.Sprintf("x-race-%d", i), "bob", fmt.Sprintf("race-%d", i))
			in.Kind, in.Exclusive = exgate.IntentTransfer, "transfer/2/ETH/1"
			err := e.CreateIntent(ctx, in)
			if err != nil && !errors.Is(err, exgate.ErrConflict) {
				t.Errorf("race %d: %v", i, err)
			}
			if err == nil {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d of 10 concurrent intents holding one key were recorded, want 1", won)
	}
}
