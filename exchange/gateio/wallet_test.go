package gateio_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/gateio"
	"github.com/exgate/exgate/exchange/gateio/gateiofake"
)

func TestBalances(t *testing.T) {
	e := newEnv(t, envOptions{account: func(a *gateiofake.Account) {
		a.Balances = map[string]string{"BTC": "1.5", "USDT": "0", "ETH": "2"}
	}})
	e.srv.HoldOrders(true)
	if _, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{Symbol: exgate.Symbol{Base: "ETH", Quote: "BTC"}, Side: exgate.SideSell, Quantity: dec("0.5"), QuantityIn: exgate.InBase, ClientOrderID: exgate.NewID('o')}); err != nil {
		t.Fatal(err)
	}
	got, err := e.ex.Balances(t.Context(), e.cred)
	if err != nil {
		t.Fatal(err)
	}
	want := []exgate.Balance{
		{Asset: "BTC", Available: dec("1.5")},
		{Asset: "ETH", Available: dec("1.5"), Locked: dec("0.5")},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b exgate.Balance) bool {
		return a.Asset == b.Asset && a.Available.Equal(b.Available) && a.Locked.Equal(b.Locked)
	})); diff != "" {
		t.Errorf("balances (-want +got; the zero USDT row is left out):\n%s", diff)
	}
}

func TestRecentDeposits(t *testing.T) {
	e := newEnv(t, envOptions{})
	all, err := e.ex.RecentDeposits(t.Context(), e.cred, exgate.DepositFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range all {
		ids = append(ids, d.ID+" "+string(d.Status)+" "+d.RawStatus+" "+d.Network)
	}
	// The fake answers oldest first; the adapter sorts newest first.
	want := []string{
		"d33361420 pending PEND ETH",
		"d33361417 pending TRACK ETH",
		"d33361402 completed DONE BTC",
		"d33361395 completed DONE TRX",
		"d33361433 failed BLOCKED XRP",
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("deposits (-want +got):\n%s", diff)
	}
	if all[4].Tag != "104223" {
		t.Errorf("XRP deposit tag %q, want the memo 104223", all[4].Tag)
	}
	tests := []struct {
		filter exgate.DepositFilter
		want   int
	}{
		{exgate.DepositFilter{Asset: "USDT"}, 2},
		{exgate.DepositFilter{Status: exgate.TransferPending}, 2},
		{exgate.DepositFilter{Asset: "USDT", Status: exgate.TransferCompleted}, 1},
		{exgate.DepositFilter{Status: exgate.TransferCanceled}, 0},
	}
	for _, tc := range tests {
		got, err := e.ex.RecentDeposits(t.Context(), e.cred, tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.want {
			t.Errorf("filter %+v: %d deposits, want %d", tc.filter, len(got), tc.want)
		}
	}
}

func TestDepositAddress(t *testing.T) {
	e := newEnv(t, envOptions{})
	tests := []struct {
		name    string
		req     exgate.DepositAddressRequest
		network string // the network code answered
		wantTag bool
		prefix  string
		code    exgate.Code
	}{
		{name: "memo chain", req: exgate.DepositAddressRequest{Asset: "XRP", Network: "XRP"}, network: "XRP", wantTag: true, prefix: "r"},
		{name: "no memo", req: exgate.DepositAddressRequest{Asset: "USDT", Network: "TRX"}, network: "TRX", prefix: "T"},
		{name: "alias", req: exgate.DepositAddressRequest{Asset: "USDT", Network: "ERC20"}, network: "ETH", prefix: "0x"},
		{name: "mapped chain", req: exgate.DepositAddressRequest{Asset: "ETH", Network: "ARBITRUM"}, network: "ARBITRUM", prefix: "0x"},
		{name: "network the asset is not on", req: exgate.DepositAddressRequest{Asset: "USDT", Network: "SOL"}, code: exgate.CodeInvalidParameter},
		{name: "unknown asset", req: exgate.DepositAddressRequest{Asset: "NOPE", Network: "ETH"}, code: exgate.CodeInvalidParameter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := e.ex.DepositAddress(t.Context(), e.cred, tc.req)
			if tc.code != "" {
				ge := wantCode(t, err, tc.code)
				if tc.req.Network == "SOL" && !strings.Contains(ge.Detail, "ETH, TRX, BSC") {
					t.Errorf("detail %q does not list the networks", ge.Detail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Asset != tc.req.Asset || a.Network != tc.network || !strings.HasPrefix(a.Address, tc.prefix) || (a.Tag != nil) != tc.wantTag {
				t.Errorf("address %+v", a)
			}
		})
	}
}

const trxAddress = "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf"

func TestWithdraw(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := exgate.NewID('w')
	req := exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: dec("100"), ClientWithdrawalID: id}
	w, err := e.ex.Withdraw(t.Context(), e.cred, req)
	if err != nil {
		t.Fatal(err)
	}
	// The fake's TRX fee is 1 USDT: 101 is sent, 100 arrives.
	if !w.Amount.Equal(dec("100")) || w.Fees == nil || !w.Fees.Equal(dec("1")) || !w.TotalAmount.Equal(dec("101")) {
		t.Errorf("amount %s fees %v total %s, want 100, 1, 101", w.Amount, w.Fees, w.TotalAmount)
	}
	if w.ID != id || w.ClientWithdrawalID != id || w.Asset != "USDT" || w.Network != "TRX" || w.Status != exgate.TransferPending || w.RawStatus != "REQUEST" || w.ExchangeID == "" {
		t.Errorf("withdrawal %+v", w)
	}
	if got := e.srv.Balance("gate-key", "USDT"); !got.Equal(dec("199899")) {
		t.Errorf("USDT balance %s, want 200000 - 101", got)
	}
	for _, q := range []exgate.WithdrawalQuery{
		{Asset: "USDT", ClientWithdrawalID: id},
		{ClientWithdrawalID: id},
		{Asset: "USDT", ClientWithdrawalID: id, ExchangeID: w.ExchangeID},
	} {
		got, err := e.ex.QueryWithdrawal(t.Context(), e.cred, q)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != exgate.TransferCompleted || got.RawStatus != "DONE" || !got.Amount.Equal(dec("100")) || !got.TotalAmount.Equal(dec("101")) || got.TxID == "" || got.ID != id {
			t.Errorf("QueryWithdrawal(%+v) = %+v", q, got)
		}
	}
	_, err = e.ex.QueryWithdrawal(t.Context(), e.cred, exgate.WithdrawalQuery{Asset: "USDT", ClientWithdrawalID: exgate.NewID('w')})
	if !errors.Is(err, exgate.ErrNotFound) {
		t.Errorf("unknown withdrawal: %v, want ErrNotFound", err)
	}
}

func TestWithdrawWithTag(t *testing.T) {
	e := newEnv(t, envOptions{})
	w, err := e.ex.Withdraw(t.Context(), e.cred, exgate.WithdrawalRequest{Asset: "XRP", Network: "XRP", Address: "rLdinLq5CJood9wdjY9ZCdgycK8KGevkUj", Tag: "123456", Amount: dec("20"), ClientWithdrawalID: exgate.NewID('w')})
	if err != nil {
		t.Fatal(err)
	}
	if w.Tag != "123456" || !w.TotalAmount.Equal(dec("20.25")) {
		t.Errorf("withdrawal %+v", w)
	}
}

func TestWithdrawalStatusLifecycle(t *testing.T) {
	e := newEnv(t, envOptions{account: func(a *gateiofake.Account) { a.PendingWithdrawals = true }})
	id := exgate.NewID('w')
	w, err := e.ex.Withdraw(t.Context(), e.cred, exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: dec("50"), ClientWithdrawalID: id})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		status, block string
		want          exgate.TransferStatus
	}{
		{"REQUEST", "0", exgate.TransferPending},
		{"MANUAL", "0", exgate.TransferPending},
		{"DONE", "0", exgate.TransferPending},
		{"DONE", "41575999", exgate.TransferCompleted},
		{"CANCEL", "0", exgate.TransferCanceled},
		{"INVALID", "0", exgate.TransferFailed},
	}
	for _, st := range steps {
		if err := e.srv.SetWithdrawalStatus("gate-key", w.ExchangeID, st.status, st.block); err != nil {
			t.Fatal(err)
		}
		got, err := e.ex.QueryWithdrawal(t.Context(), e.cred, exgate.WithdrawalQuery{Asset: "USDT", ClientWithdrawalID: id})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != st.want || got.RawStatus != st.status {
			t.Errorf("%s (block %s): status %s raw %s, want %s", st.status, st.block, got.Status, got.RawStatus, st.want)
		}
	}
}

func TestWithdrawRefused(t *testing.T) {
	tests := []struct {
		name      string
		req       exgate.WithdrawalRequest
		code      exgate.Code
		wantSent  bool
		mentions  string
		noBalance bool
	}{
		{name: "under the minimum", req: exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: dec("0.5")}, code: exgate.CodeWithdrawalRejected, mentions: "minimum"},
		{name: "over the maximum", req: exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: dec("2000000")}, code: exgate.CodeWithdrawalRejected, mentions: "maximum"},
		{name: "too many decimals", req: exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: dec("10.0000001")}, code: exgate.CodeInvalidParameter, mentions: "6 decimals"},
		{name: "network the asset is not on", req: exgate.WithdrawalRequest{Asset: "USDT", Network: "BTC", Address: trxAddress, Amount: dec("10")}, code: exgate.CodeInvalidParameter, mentions: "ETH, TRX, BSC"},
		{name: "bad address (Gate refuses)", req: exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: "not-an-address", Amount: dec("10")}, code: exgate.CodeInvalidParameter, wantSent: true},
		{name: "insufficient funds (Gate refuses)", req: exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: dec("10")}, code: exgate.CodeInsufficientFunds, wantSent: true, noBalance: true},
		{name: "bad client id", req: exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: dec("10"), ClientWithdrawalID: "has space"}, code: exgate.CodeInvalidParameter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{account: func(a *gateiofake.Account) {
				if tc.noBalance {
					a.Balances = map[string]string{"USDT": "1"}
				}
			}})
			if tc.req.ClientWithdrawalID == "" {
				tc.req.ClientWithdrawalID = exgate.NewID('w')
			}
			_, err := e.ex.Withdraw(t.Context(), e.cred, tc.req)
			ge := wantCode(t, err, tc.code)
			if !strings.Contains(ge.Detail, tc.mentions) {
				t.Errorf("detail %q, want it to mention %q", ge.Detail, tc.mentions)
			}
			if sent := e.srv.Requests("/api/v4/withdrawals") > 0; sent != tc.wantSent {
				t.Errorf("withdrawal sent: %v, want %v", sent, tc.wantSent)
			}
		})
	}
}

func TestWithdrawSafety(t *testing.T) {
	tests := []struct {
		name     string
		fault    gateiofake.Fault
		want     exgate.Code
		wantMade int
	}{
		{name: "answer lost after the withdrawal was made", fault: gateiofake.Fault{DropAfter: true}, want: exgate.CodeExchangeTimeout, wantMade: 1},
		{name: "dropped before processing", fault: gateiofake.Fault{Drop: true}, want: exgate.CodeExchangeTimeout},
		{name: "500", fault: gateiofake.Fault{Status: 500, Body: `{"label":"SERVER_ERROR","message":"oops"}`}, want: exgate.CodeExchangeTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			e.srv.SetFault(faultOn(http.MethodPost, "/api/v4/withdrawals", tc.fault))
			id := exgate.NewID('w')
			_, err := e.ex.Withdraw(t.Context(), e.cred, exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: dec("10"), ClientWithdrawalID: id})
			wantCode(t, err, tc.want)
			if n := e.srv.Requests("/api/v4/withdrawals"); n != 1 {
				t.Errorf("withdrawal sent %d times, want once", n)
			}
			e.srv.SetFault(nil)
			if n := e.srv.Withdrawals("gate-key", id); n != tc.wantMade {
				t.Errorf("%d withdrawals made, want %d", n, tc.wantMade)
			}
			got, err := e.ex.QueryWithdrawal(t.Context(), e.cred, exgate.WithdrawalQuery{Asset: "USDT", ClientWithdrawalID: id})
			switch {
			case tc.wantMade == 1 && (err != nil || !got.Amount.Equal(dec("10"))):
				t.Errorf("reconciling: %+v, %v", got, err)
			case tc.wantMade == 0 && !errors.Is(err, exgate.ErrNotFound):
				t.Errorf("reconciling: %v, want ErrNotFound", err)
			}
		})
	}
}

func TestWithdrawPacing(t *testing.T) {
	// With the default limiter, a second withdrawal within Gate's 1 per 3 s
	// is not sent when the ctx cannot wait that long.
	e := newEnv(t, envOptions{adapter: func(o *gateio.Options) { o.Limiter = nil }})
	req := exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: dec("10")}
	req.ClientWithdrawalID = exgate.NewID('w')
	if _, err := e.ex.Withdraw(t.Context(), e.cred, req); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	req.ClientWithdrawalID = exgate.NewID('w')
	_, err := e.ex.Withdraw(ctx, e.cred, req)
	ge := wantCode(t, err, exgate.CodeExchangeUnavailable)
	if ge.RetryAfter <= time.Second || ge.RetryAfter > 3*time.Second {
		t.Errorf("RetryAfter %s, want up to 3 s", ge.RetryAfter)
	}
	if n := e.srv.Requests("/api/v4/withdrawals"); n != 1 {
		t.Errorf("%d withdrawals sent, want 1", n)
	}
}
