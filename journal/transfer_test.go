package journal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/sqlite"
)

// lostTransfers is an exchange whose transfers never answer (the outcome
// is unknown) and are never found.
type lostTransfers struct {
	exgate.Exchange
	sent atomic.Int64
}

func (l *lostTransfers) WalletBalances(context.Context, exgate.Credential, exgate.WalletKind) ([]exgate.Balance, error) {
	return nil, nil
}

func (l *lostTransfers) Transfer(context.Context, exgate.Credential, exgate.TransferRequest) (exgate.Transfer, error) {
	l.sent.Add(1)
	return exgate.Transfer{}, exgate.Errorf(exgate.CodeExchangeTimeout, "no answer")
}

func (l *lostTransfers) QueryTransfer(context.Context, exgate.Credential, exgate.TransferQuery) (exgate.Transfer, error) {
	return exgate.Transfer{}, fmt.Errorf("lost: %w", exgate.ErrNotFound)
}

func (l *lostTransfers) RecentTransfers(context.Context, exgate.Credential, exgate.TransferFilter) ([]exgate.Transfer, error) {
	return nil, nil
}

func transferJournal(t *testing.T, ex exgate.Exchange, now func() time.Time) (*journal.Service, exgate.Credential) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client", Secret: "x"}); err != nil {
		t.Fatal(err)
	}
	cred, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "client", Name: "main", Exchange: sim.Name})
	if err != nil {
		t.Fatal(err)
	}
	return journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{sim.Name: ex}, Now: now,
		NotFoundGrace: time.Minute}), cred
}

// sameTransfer compares two transfers as the API writes them.
func sameTransfer(a, b exgate.Transfer) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestTransferIdempotent(t *testing.T) {
	ctx := t.Context()
	ex := sim.New(sim.Options{})
	jr, cred := transferJournal(t, ex, nil)
	req := exgate.TransferRequest{Asset: "BTC", Amount: decimal.RequireFromString("1.5"), From: exgate.WalletSpot, To: exgate.WalletFunding}
	first, err := jr.Transfer(ctx, cred, req, "mine")
	if err != nil {
		t.Fatal(err)
	}
	if first.ClientTransferID != "mine" || first.ID == "mine" || first.Status != exgate.TransferCompleted {
		t.Fatalf("first answer %+v", first)
	}
	again, err := jr.Transfer(ctx, cred, req, "mine")
	if err != nil || !sameTransfer(again, first) {
		t.Fatalf("the same id again = %+v, %v; want the first answer %+v", again, err, first)
	}
	list, err := ex.RecentTransfers(ctx, cred, exgate.TransferFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("the exchange holds %d transfers (%v), want 1", len(list), err)
	}
	other := req
	other.Amount = decimal.RequireFromString("2")
	if _, err := jr.Transfer(ctx, cred, other, "mine"); exgate.ErrorCode(err) != exgate.CodeIdempotencyConflict {
		t.Fatalf("the id reused for another transfer: %v, want IDEMPOTENCY_CONFLICT", err)
	}
	byRef, err := jr.TransferRecord(ctx, "client", "", "mine")
	if err != nil || !sameTransfer(byRef, first) {
		t.Fatalf("TransferRecord by clientTransferId = %+v, %v", byRef, err)
	}
	byID, err := jr.TransferRecord(ctx, "client", first.ID, "")
	if err != nil || !sameTransfer(byID, first) {
		t.Fatalf("TransferRecord by id = %+v, %v", byID, err)
	}
	if _, err := jr.TransferRecord(ctx, "someone else", first.ID, ""); exgate.ErrorCode(err) != exgate.CodeNotFound {
		t.Fatalf("another client's transfer: %v, want NOT_FOUND", err)
	}

	generated, err := jr.Transfer(ctx, cred, req, "")
	if err != nil {
		t.Fatal(err)
	}
	if generated.ClientTransferID != generated.ID {
		t.Fatalf("without a client id: clientTransferId %q, want the generated id %q", generated.ClientTransferID, generated.ID)
	}
	if got, err := jr.TransferRecord(ctx, "client", "", generated.ID); err != nil || !sameTransfer(got, generated) {
		t.Fatalf("TransferRecord by the generated clientTransferId = %+v, %v", got, err)
	}

	refused := req
	refused.Amount = decimal.RequireFromString("1000")
	_, err = jr.Transfer(ctx, cred, refused, "too-much")
	if e, ok := errors.AsType[*exgate.Error](err); !ok || e.Code != exgate.CodeInsufficientFunds || e.Param != "amount" {
		t.Fatalf("more than the wallet holds: %v, want INSUFFICIENT_FUNDS naming amount", err)
	}
	if _, err := jr.Transfer(ctx, cred, refused, "too-much"); exgate.ErrorCode(err) != exgate.CodeInsufficientFunds {
		t.Fatalf("the refused id again: %v, want the same refusal", err)
	}
}

// TestTransferInFlight checks that a transfer of the same asset and amount
// on the same exchange key is refused, and nothing sent, while one is
// waiting for its outcome, and allowed once that outcome is known.
func TestTransferInFlight(t *testing.T) {
	ctx := t.Context()
	clk := &shiftClock{}
	ex := &lostTransfers{Exchange: sim.New(sim.Options{})}
	jr, cred := transferJournal(t, ex, clk.Now)
	req := exgate.TransferRequest{Asset: "BTC", Amount: decimal.RequireFromString("1"), From: exgate.WalletSpot, To: exgate.WalletFunding}
	pending, err := jr.Transfer(ctx, cred, req, "a")
	if exgate.ErrorCode(err) != exgate.CodeExchangeTimeout || pending.Status != exgate.TransferPending {
		t.Fatalf("lost transfer = %+v, %v; want pending with EXCHANGE_TIMEOUT", pending, err)
	}
	back := req
	back.From, back.To = back.To, back.From
	if _, err := jr.Transfer(ctx, cred, back, "b"); exgate.ErrorCode(err) != exgate.CodeTransferInFlight {
		t.Fatalf("same asset and amount while the first is unknown: %v, want TRANSFER_IN_FLIGHT", err)
	}
	if n := ex.sent.Load(); n != 1 {
		t.Fatalf("%d transfers sent, want 1", n)
	}
	other := req
	other.Amount = decimal.RequireFromString("2")
	if _, err := jr.Transfer(ctx, cred, other, "c"); exgate.ErrorCode(err) != exgate.CodeExchangeTimeout {
		t.Fatalf("another amount: %v, want it sent", err)
	}
	// The first is never found: after the grace period it is settled as
	// never sent, and the key is free.
	clk.Add(2 * time.Minute)
	for i := 0; i < 5 && jr.ReconcileAll(ctx) != 0; i++ {
		clk.Add(time.Minute)
	}
	if _, err := jr.TransferRecord(ctx, "client", "", "a"); exgate.ErrorCode(err) != exgate.CodeTransferRejected {
		t.Fatalf("the lost transfer after reconciliation: %v, want TRANSFER_REJECTED", err)
	}
	if _, err := jr.Transfer(ctx, cred, back, "b"); exgate.ErrorCode(err) != exgate.CodeExchangeTimeout {
		t.Fatalf("same asset and amount once the first is settled: %v, want it sent", err)
	}
}
