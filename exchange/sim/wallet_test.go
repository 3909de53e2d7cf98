package sim_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/sim"
)

var networks = []exgate.DepositAddressRequest{
	{Asset: "BTC", Network: "BTC"}, {Asset: "ETH", Network: "ETH"},
	{Asset: "USDT", Network: "ETH"}, {Asset: "USDT", Network: "TRX"}, {Asset: "USDT", Network: "BSC"},
	{Asset: "SOL", Network: "SOL"}, {Asset: "XRP", Network: "XRP"}, {Asset: "BNB", Network: "BSC"},
}

func TestDepositAddress(t *testing.T) {
	ctx := t.Context()
	cred := testCredential()
	e, _, _ := newSim(t)
	again := sim.New(sim.Options{Now: func() time.Time { return testNow }})
	other := cred
	other.ID++
	prefixes := map[string]string{"BTC": "bc1q", "ETH": "0x", "BSC": "0x", "TRX": "T", "SOL": "", "XRP": "r"}
	seen := map[string]bool{}
	for _, req := range networks {
		t.Run(req.Asset+" on "+req.Network, func(t *testing.T) {
			a, err := e.DepositAddress(ctx, cred, req)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := again.DepositAddress(ctx, cred, req); !cmp.Equal(a, b) {
				t.Errorf("another instance gives %+v, want %+v", b, a)
			}
			if b, _ := e.DepositAddress(ctx, other, req); b.Address == a.Address {
				t.Errorf("another credential gets the same address %s", a.Address)
			}
			if seen[a.Address] {
				t.Errorf("address %s given for two asset/network pairs", a.Address)
			}
			seen[a.Address] = true
			if !strings.HasPrefix(a.Address, prefixes[req.Network]) {
				t.Errorf("address %s, want prefix %q", a.Address, prefixes[req.Network])
			}
			if (a.Tag != nil) != (req.Network == "XRP") {
				t.Errorf("tag %v, want one only on XRP", a.Tag)
			}
			// The address passes the sim's own withdrawal check.
			w := exgate.WithdrawalRequest{Asset: req.Asset, Network: req.Network, Address: a.Address, Amount: dec("30"), ClientWithdrawalID: exgate.NewID('w')}
			if a.Tag != nil {
				w.Tag = *a.Tag
			}
			if req.Asset == "BTC" || req.Asset == "ETH" || req.Asset == "BNB" {
				w.Amount = dec("0.5")
			}
			if _, err := e.Withdraw(ctx, other, w); err != nil {
				t.Errorf("withdrawing to the deposit address: %v", err)
			}
		})
	}
	for _, tc := range []struct {
		req   exgate.DepositAddressRequest
		param string
	}{
		{exgate.DepositAddressRequest{Asset: "DOGE", Network: "DOGE"}, "asset"},
		{exgate.DepositAddressRequest{Asset: "USDT", Network: "SOL"}, "network"},
		{exgate.DepositAddressRequest{Asset: "BNB", Network: "BNB"}, "network"},
	} {
		_, err := e.DepositAddress(ctx, cred, tc.req)
		wantCode(t, err, exgate.CodeInvalidParameter, tc.param)
	}
}

func TestWithdraw(t *testing.T) {
	ctx := t.Context()
	cred := testCredential()
	e, _, _ := newSim(t)
	before := balances(t, e, cred)
	req := exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", Amount: dec("1234.567891"), ClientWithdrawalID: "w1"}
	w, err := e.Withdraw(ctx, cred, req)
	if err != nil {
		t.Fatal(err)
	}
	want := exgate.Withdrawal{
		ID: "w1", Amount: exgate.NewNumber(dec("1234.567891")), Fees: exgate.NumberPtr(dec("1")),
		TotalAmount: exgate.NewNumber(dec("1235.567891")), Asset: "USDT", Status: exgate.TransferCompleted,
		ToAddress: req.Address, TxID: w.TxID, Timestamp: testNow.UnixMilli(), Network: "TRX",
		Exchange: "sim", ClientWithdrawalID: "w1", ExchangeID: w.ExchangeID, RawStatus: "COMPLETED",
	}
	if diff := cmp.Diff(w, want); diff != "" {
		t.Fatalf("withdrawal (-got +want):\n%s", diff)
	}
	if len(w.TxID) != 64 || w.ExchangeID == "" {
		t.Errorf("txId %q exchangeId %q, want a 64-hex-digit txId and an exchange id", w.TxID, w.ExchangeID)
	}
	if got := before["USDT"].Sub(balances(t, e, cred)["USDT"]); !got.Equal(dec("1235.567891")) {
		t.Errorf("USDT debited by %s, want amount + fee 1235.567891", got)
	}
	back, err := e.QueryWithdrawal(ctx, cred, exgate.WithdrawalQuery{Asset: "USDT", ClientWithdrawalID: "w1"})
	if err != nil || !cmp.Equal(back, w) {
		t.Fatalf("QueryWithdrawal = %+v, %v; want %+v", back, err, w)
	}
	for _, q := range []exgate.WithdrawalQuery{
		{Asset: "BTC", ClientWithdrawalID: "w1"},
		{Asset: "USDT", ClientWithdrawalID: "w1", ExchangeID: "1"},
		{Asset: "USDT", ClientWithdrawalID: "w2"},
		{Asset: "USDT", ExchangeID: w.ExchangeID},
	} {
		if _, err := e.QueryWithdrawal(ctx, cred, q); !errors.Is(err, exgate.ErrNotFound) {
			t.Errorf("QueryWithdrawal(%+v): %v, want ErrNotFound", q, err)
		}
	}
	// An order id is not a withdrawal id, and the other way round.
	if _, err := e.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: "w1"}); !errors.Is(err, exgate.ErrNotFound) {
		t.Errorf("QueryOrder of a withdrawal id: %v, want ErrNotFound", err)
	}
}

func TestWithdrawErrors(t *testing.T) {
	ctx := t.Context()
	cred := testCredential()
	eth := "0x52908400098527886E0F7030069857D2E4169EE7"
	xrp := "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh"
	tests := []struct {
		name  string
		req   exgate.WithdrawalRequest
		code  exgate.Code
		param string
	}{
		{"unknown asset", exgate.WithdrawalRequest{Asset: "DOGE", Network: "DOGE", Address: "D", Amount: dec("1")}, exgate.CodeInvalidParameter, "asset"},
		{"network of another asset", exgate.WithdrawalRequest{Asset: "BTC", Network: "ETH", Address: eth, Amount: dec("1")}, exgate.CodeInvalidParameter, "network"},
		{"bad address", exgate.WithdrawalRequest{Asset: "ETH", Network: "ETH", Address: "not-an-address", Amount: dec("1")}, exgate.CodeInvalidParameter, "address"},
		{"bad checksum", exgate.WithdrawalRequest{Asset: "ETH", Network: "ETH", Address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", Amount: dec("1")}, exgate.CodeInvalidParameter, "address"},
		{"bitcoin address on tron", exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", Amount: dec("10")}, exgate.CodeInvalidParameter, "address"},
		{"xrp without a tag", exgate.WithdrawalRequest{Asset: "XRP", Network: "XRP", Address: xrp, Amount: dec("10")}, exgate.CodeInvalidParameter, "tag"},
		{"xrp with a bad tag", exgate.WithdrawalRequest{Asset: "XRP", Network: "XRP", Address: xrp, Tag: "memo", Amount: dec("10")}, exgate.CodeInvalidParameter, "tag"},
		{"tag on ethereum", exgate.WithdrawalRequest{Asset: "ETH", Network: "ETH", Address: eth, Tag: "1", Amount: dec("1")}, exgate.CodeInvalidParameter, "tag"},
		{"too many decimals", exgate.WithdrawalRequest{Asset: "USDT", Network: "BSC", Address: eth, Amount: dec("10.0000001")}, exgate.CodeInvalidParameter, "amount"},
		{"under the minimum", exgate.WithdrawalRequest{Asset: "USDT", Network: "ETH", Address: eth, Amount: dec("9.99")}, exgate.CodeWithdrawalRejected, ""},
		{"more than held", exgate.WithdrawalRequest{Asset: "ETH", Network: "ETH", Address: eth, Amount: dec("100")}, exgate.CodeInsufficientFunds, ""},
		{"no client id", exgate.WithdrawalRequest{Asset: "ETH", Network: "ETH", Address: eth, Amount: dec("1")}, exgate.CodeInvalidParameter, "clientWithdrawalId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := newSim(t)
			before := balances(t, e, cred)
			req := tc.req
			if tc.param != "clientWithdrawalId" {
				req.ClientWithdrawalID = exgate.NewID('w')
			}
			_, err := e.Withdraw(ctx, cred, req)
			wantCode(t, err, tc.code, tc.param)
			if diff := cmp.Diff(balances(t, e, cred), before); diff != "" {
				t.Errorf("a refused withdrawal moved balances (-after +before):\n%s", diff)
			}
		})
	}
	t.Run("same client id twice", func(t *testing.T) {
		e, _, _ := newSim(t)
		req := exgate.WithdrawalRequest{Asset: "ETH", Network: "ETH", Address: eth, Amount: dec("1"), ClientWithdrawalID: "w1"}
		if _, err := e.Withdraw(ctx, cred, req); err != nil {
			t.Fatal(err)
		}
		_, err := e.Withdraw(ctx, cred, req)
		wantCode(t, err, exgate.CodeWithdrawalRejected, "")
		if got := balances(t, e, cred)["ETH"]; !got.Equal(dec("98.9988")) {
			t.Errorf("ETH %s, want 100 - 1 - fee 0.0012 once", got)
		}
	})
}

func TestDeposits(t *testing.T) {
	ctx := t.Context()
	cred := testCredential()
	e, _, clk := newSim(t)
	t.Run("pending and completed at any time", func(t *testing.T) {
		for i := range 60 {
			at := testNow.Add(time.Duration(i) * 37 * time.Minute)
			e := sim.New(sim.Options{Now: func() time.Time { return at }})
			ds, err := e.RecentDeposits(ctx, cred, exgate.DepositFilter{})
			if err != nil {
				t.Fatal(err)
			}
			count := map[exgate.TransferStatus]int{}
			for j, d := range ds {
				count[d.Status]++
				if j > 0 && d.Timestamp >= ds[j-1].Timestamp {
					t.Fatalf("at %s: deposit %d not older than the one before", at, j)
				}
				if d.Timestamp > at.UnixMilli() || d.Timestamp < at.Add(-15*24*time.Hour).UnixMilli() {
					t.Fatalf("at %s: deposit at %d outside the last 14 days", at, d.Timestamp)
				}
			}
			if count[exgate.TransferPending] == 0 || count[exgate.TransferCompleted] == 0 {
				t.Fatalf("at %s: statuses %v, want pending and completed deposits", at, count)
			}
		}
	})
	t.Run("a pending deposit completes", func(t *testing.T) {
		pending, err := e.RecentDeposits(ctx, cred, exgate.DepositFilter{Status: exgate.TransferPending})
		if err != nil || len(pending) == 0 {
			t.Fatalf("pending deposits: %v, %v", pending, err)
		}
		clk.Add(3 * time.Hour)
		all, _ := e.RecentDeposits(ctx, cred, exgate.DepositFilter{})
		for _, p := range pending {
			found := false
			for _, d := range all {
				if d.ID == p.ID {
					found = true
					want := p
					want.Status, want.RawStatus = exgate.TransferCompleted, "CREDITED"
					if d.RawStatus == "FAILED" {
						want.Status, want.RawStatus = exgate.TransferFailed, "FAILED"
					}
					if diff := cmp.Diff(d, want); diff != "" {
						t.Errorf("deposit %s three hours later (-got +want):\n%s", p.ID, diff)
					}
				}
			}
			if !found {
				t.Errorf("pending deposit %s gone three hours later", p.ID)
			}
		}
	})
	t.Run("addresses are the credential's", func(t *testing.T) {
		ds, _ := e.RecentDeposits(ctx, cred, exgate.DepositFilter{Asset: "XRP"})
		if len(ds) == 0 {
			t.Fatal("no XRP deposits")
		}
		addr, _ := e.DepositAddress(ctx, cred, exgate.DepositAddressRequest{Asset: "XRP", Network: "XRP"})
		for _, d := range ds {
			if d.Asset != "XRP" || d.Address != addr.Address || d.Tag != *addr.Tag {
				t.Fatalf("deposit %+v, want XRP to %s tag %s", d, addr.Address, *addr.Tag)
			}
		}
	})
	t.Run("each credential has its own history", func(t *testing.T) {
		other := cred
		other.ID++
		a, _ := e.RecentDeposits(ctx, cred, exgate.DepositFilter{})
		b, _ := e.RecentDeposits(ctx, other, exgate.DepositFilter{})
		if a[0].ID == b[0].ID {
			t.Fatal("two credentials share a deposit")
		}
	})
	t.Run("no match is an empty list", func(t *testing.T) {
		ds, err := e.RecentDeposits(ctx, cred, exgate.DepositFilter{Asset: "DOGE"})
		if err != nil || ds == nil || len(ds) != 0 {
			t.Fatalf("RecentDeposits(DOGE) = %#v, %v; want an empty list", ds, err)
		}
	})
}
