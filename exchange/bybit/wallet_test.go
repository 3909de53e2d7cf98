package bybit_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/bybit"
	"github.com/exgate/exgate/exchange/bybit/bybitfake"
)

// Every one of Bybit's deposit statuses is mapped, the raw one kept, and
// the 30-day window respected (the seeded history has a record older).
func TestDeposits(t *testing.T) {
	e := newEnv(t, envOptions{})
	ds, err := e.ex.RecentDeposits(t.Context(), e.cred, exgate.DepositFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]exgate.TransferStatus{"3": exgate.TransferCompleted, "1": exgate.TransferPending, "2": exgate.TransferPending,
		"4": exgate.TransferFailed, "10012": exgate.TransferCompleted, "70011": exgate.TransferFailed}
	if len(ds) != 7 {
		t.Fatalf("%d deposits, want the 7 of the last 30 days: %+v", len(ds), ds)
	}
	for i, d := range ds {
		if st, ok := want[d.RawStatus]; ok && d.Status != st {
			t.Errorf("deposit %s: status %s for raw %s, want %s", d.ID, d.Status, d.RawStatus, st)
		}
		if i > 0 && d.Timestamp > ds[i-1].Timestamp {
			t.Errorf("not newest first at %d", i)
		}
		if d.ID == "10005" && (d.Tag != "104223" || d.Network != "XRP") {
			t.Errorf("XRP deposit %+v", d)
		}
	}
	failed, err := e.ex.RecentDeposits(t.Context(), e.cred, exgate.DepositFilter{Status: exgate.TransferFailed})
	if err != nil || len(failed) != 2 {
		t.Errorf("failed deposits = %+v, %v", failed, err)
	}
	usdt, err := e.ex.RecentDeposits(t.Context(), e.cred, exgate.DepositFilter{Asset: "usdt"})
	if err != nil || len(usdt) != 3 {
		t.Errorf("USDT deposits = %+v, %v", usdt, err)
	}
}

// Bybit's withdrawal fee comes on top of the amount (feeType 0), from the
// funding wallet: amount means what arrives, as on every exchange.
func TestWithdrawFeeAndFundingWallet(t *testing.T) {
	e := newEnv(t, envOptions{account: func(a *bybitfake.Account) { a.Fund = map[string]string{"USDT": "100.5", "XRP": "1000"} }})
	ctx := t.Context()
	req := exgate.WithdrawalRequest{ClientWithdrawalID: "w1", Asset: "USDT", Network: "TRC20", Address: addressBook[0].Address, Amount: dec("100")}
	// 100 + the 1 USDT fee is more than the funding wallet's 100.5; the
	// unified wallet's 200000 is not drawn on.
	_, err := e.ex.Withdraw(ctx, e.cred, req)
	if ee := wantCode(t, err, exgate.CodeInsufficientFunds); !strings.Contains(ee.Detail, "funding wallet") {
		t.Errorf("detail %q", ee.Detail)
	}
	req.Amount = dec("99.5")
	w, err := e.ex.Withdraw(ctx, e.cred, req)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Amount.Equal(dec("99.5")) || num(w.Fees) != "1" || !w.TotalAmount.Equal(dec("100.5")) || w.Network != "TRX" || w.Status != exgate.TransferCompleted || w.RawStatus != "success" {
		t.Errorf("withdrawal %+v", w)
	}
	if !e.srv.FundBalance("bybit-key", "USDT").IsZero() || !e.srv.Balance("bybit-key", "USDT").Equal(dec("200000")) {
		t.Errorf("funding %s, unified %s", e.srv.FundBalance("bybit-key", "USDT"), e.srv.Balance("bybit-key", "USDT"))
	}
	// A tag where the book has one.
	x, err := e.ex.Withdraw(ctx, e.cred, exgate.WithdrawalRequest{ClientWithdrawalID: "w2", Asset: "XRP", Network: "XRP", Address: addressBook[1].Address, Tag: addressBook[1].Tag, Amount: dec("25")})
	if err != nil || x.Tag != "424242" {
		t.Fatalf("XRP withdrawal %+v, %v", x, err)
	}
	// Read back by the client id alone in this process, and by Bybit's id.
	got, err := e.ex.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "USDT", ClientWithdrawalID: "w1"})
	if err != nil || got.ExchangeID != w.ExchangeID || got.ID != "w1" {
		t.Errorf("by client id: %+v, %v", got, err)
	}
	// Another process cannot tell the account's withdrawals apart by
	// client id (Bybit's records carry no requestId): not NOT_FOUND, so
	// the journal never calls a made withdrawal failed.
	other := bybit.New(bybit.Options{BaseURL: e.srv.URL, HTTPClient: e.srv.Client(), Limiter: noLimits{}})
	_, err = other.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "USDT", ClientWithdrawalID: "w1"})
	if errors.Is(err, exgate.ErrNotFound) || exgate.ErrorCode(err) != exgate.CodeExchangeUnavailable {
		t.Errorf("another process by client id: %v", err)
	}
	if got, err := other.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "USDT", ClientWithdrawalID: "w1", ExchangeID: w.ExchangeID}); err != nil || !got.Amount.Equal(dec("99.5")) {
		t.Errorf("another process by id: %+v, %v", got, err)
	}
	// An asset with no withdrawals at all: not found.
	if _, err := other.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "BTC", ClientWithdrawalID: "w9"}); !errors.Is(err, exgate.ErrNotFound) {
		t.Errorf("no BTC withdrawals: %v", err)
	}
	// Decimals beyond the chain's accuracy are refused before sending.
	n := e.srv.Withdrawals("bybit-key")
	_, err = e.ex.Withdraw(ctx, e.cred, exgate.WithdrawalRequest{ClientWithdrawalID: "w3", Asset: "XRP", Network: "XRP", Address: addressBook[1].Address, Tag: addressBook[1].Tag, Amount: dec("25.1234567")})
	if ee := wantCode(t, err, exgate.CodeInvalidParameter); ee.Param != "amount" {
		t.Errorf("param %q", ee.Param)
	}
	if _, err := e.ex.Withdraw(ctx, e.cred, exgate.WithdrawalRequest{ClientWithdrawalID: "w4", Asset: "USDT", Network: "SOL", Address: "x", Amount: dec("20")}); exgate.ErrorCode(err) != exgate.CodeInvalidParameter {
		t.Errorf("unknown network: %v", err)
	}
	if e.srv.Withdrawals("bybit-key") != n {
		t.Errorf("refused withdrawals reached Bybit")
	}
	ws, err := e.ex.RecentWithdrawals(ctx, e.cred, exgate.WithdrawalFilter{})
	if err != nil || len(ws) != 2 || ws[0].Asset != "XRP" {
		t.Errorf("recent withdrawals = %+v, %v", ws, err)
	}
}

// Transfers between the unified (spot) and funding wallets, idempotent by
// the transferId derived from the client's id.
func TestTransfers(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	var wt exgate.WalletTransfers = e.ex
	req := exgate.TransferRequest{Asset: "USDT", Amount: dec("250"), From: exgate.WalletSpot, To: exgate.WalletFunding, ClientTransferID: "t-1"}
	tr, err := wt.Transfer(ctx, e.cred, req)
	if err != nil || tr.Status != exgate.TransferCompleted || tr.ID != "t-1" || tr.ExchangeID == "" {
		t.Fatalf("transfer %+v, %v", tr, err)
	}
	if !e.srv.FundBalance("bybit-key", "USDT").Equal(dec("5250")) || !e.srv.Balance("bybit-key", "USDT").Equal(dec("199750")) {
		t.Errorf("after: funding %s, unified %s", e.srv.FundBalance("bybit-key", "USDT"), e.srv.Balance("bybit-key", "USDT"))
	}
	// The same client id again moves nothing and answers the transfer.
	again, err := wt.Transfer(ctx, e.cred, req)
	if err != nil || again.ExchangeID != tr.ExchangeID || again.Status != exgate.TransferCompleted || e.srv.Transfers("bybit-key") != 1 {
		t.Errorf("again %+v, %v; %d transfers", again, err, e.srv.Transfers("bybit-key"))
	}
	if !e.srv.FundBalance("bybit-key", "USDT").Equal(dec("5250")) {
		t.Errorf("the repeat moved funds")
	}
	got, err := wt.QueryTransfer(ctx, e.cred, exgate.TransferQuery{ClientTransferID: "t-1"})
	if err != nil || got.ID != "t-1" || !got.Amount.Equal(dec("250")) || got.From != exgate.WalletSpot || got.To != exgate.WalletFunding {
		t.Errorf("query %+v, %v", got, err)
	}
	if _, err := wt.QueryTransfer(ctx, e.cred, exgate.TransferQuery{ClientTransferID: "t-none"}); !errors.Is(err, exgate.ErrNotFound) {
		t.Errorf("unknown transfer: %v", err)
	}
	back := exgate.TransferRequest{Asset: "USDT", Amount: dec("10"), From: exgate.WalletFunding, To: exgate.WalletSpot, ClientTransferID: "t-2"}
	if _, err := wt.Transfer(ctx, e.cred, back); err != nil {
		t.Fatal(err)
	}
	list, err := wt.RecentTransfers(ctx, e.cred, exgate.TransferFilter{Asset: "USDT"})
	if err != nil || len(list) != 2 {
		t.Fatalf("transfers %+v, %v", list, err)
	}
	fund, err := wt.WalletBalances(ctx, e.cred, exgate.WalletFunding)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range fund {
		if b.Asset == "USDT" && !b.Available.Equal(dec("5240")) {
			t.Errorf("funding USDT %+v", b)
		}
	}
	// More than the wallet holds: INSUFFICIENT_FUNDS, nothing moves.
	_, err = wt.Transfer(ctx, e.cred, exgate.TransferRequest{Asset: "BTC", Amount: dec("1"), From: exgate.WalletFunding, To: exgate.WalletSpot, ClientTransferID: "t-3"})
	wantCode(t, err, exgate.CodeInsufficientFunds)
	_, err = wt.Transfer(ctx, e.cred, exgate.TransferRequest{Asset: "BTC", Amount: dec("1"), From: exgate.WalletSpot, To: exgate.WalletSpot, ClientTransferID: "t-4"})
	wantCode(t, err, exgate.CodeInvalidParameter)
}

// A withdrawal whose answer was lost is found by its details (Bybit's
// records carry no requestId), never sent twice; one that never reached
// Bybit is not found.
func TestWithdrawalAnswerLost(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fault     bybitfake.Fault
		wantFound bool
	}{
		{"processed, answer lost", bybitfake.Fault{DropAfter: true}, true},
		{"dropped before", bybitfake.Fault{Drop: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			ctx := t.Context()
			// An earlier withdrawal of the same amount to the same address
			// is claimed by its own id and must not be taken for this one.
			first, err := e.ex.Withdraw(ctx, e.cred, exgate.WithdrawalRequest{ClientWithdrawalID: "wa0", Asset: "USDT", Network: "TRX", Address: addressBook[0].Address, Amount: dec("100")})
			if err != nil {
				t.Fatal(err)
			}
			e.srv.SetFault(func(r *http.Request) bybitfake.Fault {
				if r.URL.Path == "/v5/asset/withdraw/create" {
					return tc.fault
				}
				return bybitfake.Fault{}
			})
			_, err = e.ex.Withdraw(ctx, e.cred, exgate.WithdrawalRequest{ClientWithdrawalID: "wa1", Asset: "USDT", Network: "TRX", Address: addressBook[0].Address, Amount: dec("100")})
			wantCode(t, err, exgate.CodeExchangeTimeout)
			e.srv.SetFault(nil)
			w, err := e.ex.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "USDT", ClientWithdrawalID: "wa1"})
			switch {
			case tc.wantFound && (err != nil || w.ExchangeID == first.ExchangeID || w.ID != "wa1" || !w.Amount.Equal(dec("100"))):
				t.Errorf("found %+v, %v", w, err)
			case !tc.wantFound && !errors.Is(err, exgate.ErrNotFound):
				t.Errorf("never sent: %+v, %v", w, err)
			}
			want := 1
			if tc.wantFound {
				want = 2
			}
			if n := e.srv.Withdrawals("bybit-key"); n != want {
				t.Errorf("%d withdrawals on the fake, want %d", n, want)
			}
		})
	}
}
