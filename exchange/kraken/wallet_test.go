package kraken_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/kraken"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

func TestBalances(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	got, err := e.ex.Balances(t.Context(), e.cred)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Asset, Available, Locked string }
	var rows []row
	for _, b := range got {
		rows = append(rows, row{b.Asset, b.Available.String(), b.Locked.String()})
	}
	// XBT.F and ETH2.S (earn holdings) are left out and not added to BTC;
	// the zero EUR balance is left out; XTZ stays XTZ, XZEC is ZEC.
	want := []row{
		{"BTC", "10", "0"},
		{"ETH", "100", "0"},
		{"SOL", "500", "0"},
		{"USD", "98500", "1500"},
		{"USDT", "100000", "0"},
		{"XRP", "1000", "0"},
		{"XTZ", "250", "0"},
		{"ZEC", "3", "0"},
	}
	if diff := cmp.Diff(rows, want); diff != "" {
		t.Errorf("balances (-got +want):\n%s", diff)
	}
}

func TestDeposits(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	ctx := t.Context()
	all, err := e.ex.RecentDeposits(ctx, e.cred, exgate.DepositFilter{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Asset, Network, Amount, Raw string
		Status                      exgate.TransferStatus
	}
	var rows []row
	for _, d := range all {
		rows = append(rows, row{d.Asset, d.Network, d.Amount.String(), d.RawStatus, d.Status})
	}
	want := []row{ // newest first
		{"USDT", "TRX", "250", "Pending", exgate.TransferPending},
		{"ETH", "ETH", "1.5", "Settled", exgate.TransferPending},
		{"SOL", "SOL", "10", "Failure", exgate.TransferFailed},
		{"BTC", "BTC", "0.78125", "Success", exgate.TransferCompleted},
	}
	if diff := cmp.Diff(rows, want); diff != "" {
		t.Errorf("deposits (-got +want):\n%s", diff)
	}
	btc := all[3]
	if btc.ID != "FTQcuak-V6Za8qrWnhzTx67yYHz8Tg" || btc.Address != "2Myd4eaAW96ojk38A2uDK4FbioCayvkEgVq" || btc.TxID == "" || btc.Timestamp != (testNow.Unix()-86400)*1000 {
		t.Errorf("BTC deposit %+v", btc)
	}
	filters := []struct {
		f    exgate.DepositFilter
		want int
	}{
		{exgate.DepositFilter{Asset: "BTC"}, 1},
		{exgate.DepositFilter{Status: exgate.TransferPending}, 2},
		{exgate.DepositFilter{Asset: "USDT", Status: exgate.TransferCompleted}, 0},
		{exgate.DepositFilter{Asset: "NOSUCHCOIN"}, 0},
	}
	for _, tc := range filters {
		got, err := e.ex.RecentDeposits(ctx, e.cred, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.want || got == nil {
			t.Errorf("RecentDeposits(%+v) = %d deposits, want %d (non-nil)", tc.f, len(got), tc.want)
		}
	}
	t.Run("on hold", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		err := e.srv.AddAccount(krakenfake.Account{Key: "k2", Secret: testSecret, Deposits: []krakenfake.Deposit{
			{Refid: "FT1", Asset: "XXRP", Method: "Ripple XRP", Amount: "20", Fee: "0", Time: testNow.Unix(), Status: "Success", StatusProp: "onhold"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		cred := e.cred
		cred.Key = "k2"
		got, err := e.ex.RecentDeposits(t.Context(), cred, exgate.DepositFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Status != exgate.TransferPending || got[0].RawStatus != "Success/onhold" || got[0].Asset != "XRP" || got[0].Network != "XRP" {
			t.Errorf("deposit on hold: %+v", got)
		}
	})
}

func TestDepositAddress(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	ctx := t.Context()
	tests := []struct {
		asset, network, prefix string
		tag                    bool
	}{
		{"BTC", "BTC", "bc1q", false},
		{"ETH", "ETH", "0x", false},
		{"USDT", "ETH", "0x", false},
		{"USDT", "TRX", "T", false},
		{"SOL", "SOL", "", false},
		{"XRP", "XRP", "r", true},
	}
	for _, tc := range tests {
		t.Run(tc.asset+" on "+tc.network, func(t *testing.T) {
			a, err := e.ex.DepositAddress(ctx, e.cred, exgate.DepositAddressRequest{Asset: tc.asset, Network: tc.network})
			if err != nil {
				t.Fatal(err)
			}
			if a.Asset != tc.asset || a.Network != tc.network || !strings.HasPrefix(a.Address, tc.prefix) || a.Address == "" {
				t.Errorf("address %+v", a)
			}
			if (a.Tag != nil) != tc.tag || (a.Tag != nil && *a.Tag == "") {
				t.Errorf("tag %v, want set: %v", a.Tag, tc.tag)
			}
			again, err := e.ex.DepositAddress(ctx, e.cred, exgate.DepositAddressRequest{Asset: tc.asset, Network: tc.network})
			if err != nil || again.Address != a.Address {
				t.Errorf("second call gave %q, %v; want the same address %q", again.Address, err, a.Address)
			}
		})
	}
	t.Run("unknown network names the ones Kraken has", func(t *testing.T) {
		_, err := e.ex.DepositAddress(ctx, e.cred, exgate.DepositAddressRequest{Asset: "BTC", Network: "ETH"})
		xe := wantCode(t, err, exgate.CodeInvalidParameter, "BTC, LIGHTNING")
		if xe.Param != "network" {
			t.Errorf("param %q, want network", xe.Param)
		}
	})
	t.Run("unknown asset", func(t *testing.T) {
		_, err := e.ex.DepositAddress(ctx, e.cred, exgate.DepositAddressRequest{Asset: "NOSUCHCOIN", Network: "ETH"})
		wantCode(t, err, exgate.CodeInvalidParameter)
	})
}

func TestWithdrawKeyLookup(t *testing.T) {
	tests := []struct {
		name       string
		req        exgate.WithdrawalRequest
		wantForm   url.Values
		wantCode   exgate.Code
		mention    []string
		wantSentOK bool
	}{
		{
			name:     "found by address",
			req:      exgate.WithdrawalRequest{Asset: "BTC", Network: "BTC", Address: btcAddress, Amount: dec("0.01")},
			wantForm: url.Values{"asset": {"XXBT"}, "key": {"btc-wallet-1"}, "amount": {"0.01015"}, "address": {btcAddress}, "max_fee": {"0.00015"}},
		},
		{
			name:     "found by address and tag",
			req:      exgate.WithdrawalRequest{Asset: "XRP", Network: "XRP", Address: xrpAddress, Tag: xrpTag, Amount: dec("25")},
			wantForm: url.Values{"asset": {"XXRP"}, "key": {"xrp-exchange"}, "amount": {"25.2"}, "address": {xrpAddress}, "max_fee": {"0.2"}},
		},
		{
			name:     "address not saved",
			req:      exgate.WithdrawalRequest{Asset: "BTC", Network: "BTC", Address: "bc1qnotsaved", Amount: dec("0.01")},
			wantCode: exgate.CodeWithdrawalRejected, mention: []string{"bc1qnotsaved", "Add address", "BTC"},
		},
		{
			name:     "tag differs",
			req:      exgate.WithdrawalRequest{Asset: "XRP", Network: "XRP", Address: xrpAddress, Tag: "42", Amount: dec("25")},
			wantCode: exgate.CodeWithdrawalRejected, mention: []string{"tag", "Add address"},
		},
		{
			name:     "network differs",
			req:      exgate.WithdrawalRequest{Asset: "BTC", Network: "LIGHTNING", Address: btcAddress, Amount: dec("0.01")},
			wantCode: exgate.CodeWithdrawalRejected, mention: []string{"LIGHTNING"},
		},
		{
			name:     "address not confirmed",
			req:      exgate.WithdrawalRequest{Asset: "BTC", Network: "BTC", Address: unverifiedAddr, Amount: dec("0.01")},
			wantCode: exgate.CodeWithdrawalRejected, mention: []string{"btc-unconfirmed", "confirm"},
		},
		{
			name:     "too many decimals",
			req:      exgate.WithdrawalRequest{Asset: "BTC", Network: "BTC", Address: btcAddress, Amount: dec("0.00000000001")},
			wantCode: exgate.CodeInvalidParameter, mention: []string{"10 decimals"},
		},
		{
			name:     "below Kraken's minimum",
			req:      exgate.WithdrawalRequest{Asset: "BTC", Network: "BTC", Address: btcAddress, Amount: dec("0.00001")},
			wantCode: exgate.CodeWithdrawalRejected, mention: []string{"EFunding:Invalid amount"},
		},
		{
			name:     "insufficient funds",
			req:      exgate.WithdrawalRequest{Asset: "BTC", Network: "BTC", Address: btcAddress, Amount: dec("100")},
			wantCode: exgate.CodeInsufficientFunds, mention: []string{"EFunding:Insufficient funds"}, wantSentOK: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, krakenfake.Options{}, nil)
			sent := watch(e.srv, "/0/private/Withdraw", nil)
			req := tc.req
			req.ClientWithdrawalID = exgate.NewID('w')
			w, err := e.ex.Withdraw(t.Context(), e.cred, req)
			if tc.wantCode != "" {
				wantCode(t, err, tc.wantCode, tc.mention...)
				if n := len(sent.all()); (n == 1) != tc.wantSentOK {
					t.Errorf("%d Withdraw requests", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			form := sent.last(t)
			form.Del("nonce")
			if diff := cmp.Diff(form, tc.wantForm); diff != "" {
				t.Errorf("Withdraw form (-got +want):\n%s", diff)
			}
			fee := dec(tc.wantForm.Get("max_fee"))
			if !w.Amount.Equal(req.Amount) || w.Fees == nil || !w.Fees.Equal(fee) || !w.TotalAmount.Equal(req.Amount.Add(fee)) {
				t.Errorf("amount %s fees %v total %s, want %s + %s", w.Amount, w.Fees, w.TotalAmount, req.Amount, fee)
			}
			if w.ID != req.ClientWithdrawalID || w.ExchangeID == "" || w.Status != exgate.TransferPending || w.RawStatus != "Initial" || w.Tag != req.Tag {
				t.Errorf("withdrawal %+v", w)
			}
		})
	}
}

func TestQueryWithdrawal(t *testing.T) {
	btcReq := func() exgate.WithdrawalRequest {
		return exgate.WithdrawalRequest{Asset: "BTC", Network: "BTC", Address: btcAddress, Amount: dec("0.01"), ClientWithdrawalID: exgate.NewID('w')}
	}
	t.Run("by refid and by client id, status changes", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		ctx := t.Context()
		req := btcReq()
		w, err := e.ex.Withdraw(ctx, e.cred, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []exgate.WithdrawalQuery{
			{Asset: "BTC", ClientWithdrawalID: req.ClientWithdrawalID, ExchangeID: w.ExchangeID},
			{Asset: "BTC", ClientWithdrawalID: req.ClientWithdrawalID},
			{ClientWithdrawalID: req.ClientWithdrawalID},
		} {
			got, err := e.ex.QueryWithdrawal(ctx, e.cred, q)
			if err != nil {
				t.Fatalf("QueryWithdrawal(%+v): %v", q, err)
			}
			if got.ExchangeID != w.ExchangeID || !got.Amount.Equal(req.Amount) || got.ToAddress != btcAddress || got.Network != "BTC" || got.ID != req.ClientWithdrawalID {
				t.Errorf("QueryWithdrawal(%+v) = %+v", q, got)
			}
		}
		steps := []struct {
			status, prop, raw string
			want              exgate.TransferStatus
		}{
			{"Pending", "", "Pending", exgate.TransferPending},
			{"Settled", "", "Settled", exgate.TransferPending},
			{"Success", "", "Success", exgate.TransferCompleted},
			{"Failure", "canceled", "Failure/canceled", exgate.TransferCanceled},
			{"Failure", "", "Failure", exgate.TransferFailed},
		}
		for _, s := range steps {
			if err := e.srv.SetWithdrawalStatus(testKey, w.ExchangeID, s.status, s.prop); err != nil {
				t.Fatal(err)
			}
			got, err := e.ex.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "BTC", ClientWithdrawalID: req.ClientWithdrawalID})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != s.want || got.RawStatus != s.raw {
				t.Errorf("Kraken %s/%s: status %s raw %q, want %s %q", s.status, s.prop, got.Status, got.RawStatus, s.want, s.raw)
			}
			if s.status == "Success" && got.TxID == "" {
				t.Error("no txId after Success")
			}
		}
	})
	t.Run("answer lost: found by asset, key, amount and time", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		ctx := t.Context()
		watch(e.srv, "/0/private/Withdraw", func(int) krakenfake.Fault { return krakenfake.Fault{DropAfter: true} })
		first, second := btcReq(), btcReq()
		for _, req := range []exgate.WithdrawalRequest{first, second} {
			_, err := e.ex.Withdraw(ctx, e.cred, req)
			wantCode(t, err, exgate.CodeExchangeTimeout)
		}
		if n := e.srv.Requests("/0/private/Withdraw"); n != 2 {
			t.Errorf("%d Withdraw requests, want 2 (one each, never re-sent)", n)
		}
		e.srv.SetFault(nil)
		seen := map[string]bool{}
		for _, req := range []exgate.WithdrawalRequest{first, second} {
			got, err := e.ex.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "BTC", ClientWithdrawalID: req.ClientWithdrawalID})
			if err != nil {
				t.Fatal(err)
			}
			if got.ExchangeID == "" || seen[got.ExchangeID] || !got.Amount.Equal(req.Amount) {
				t.Errorf("QueryWithdrawal(%s) = %+v; want a distinct Kraken withdrawal of %s", req.ClientWithdrawalID, got, req.Amount)
			}
			seen[got.ExchangeID] = true
		}
	})
	t.Run("answer lost: amounts a fee apart keep their own rows", func(t *testing.T) {
		// The fake's Bitcoin fee is 0.00015: the second withdrawal's gross
		// amount (0.01015 + 0.00015) is the first one's net amount, so a
		// row read as gross could be either. Each must get its own.
		e := newEnv(t, krakenfake.Options{}, nil)
		ctx := t.Context()
		watch(e.srv, "/0/private/Withdraw", func(int) krakenfake.Fault { return krakenfake.Fault{DropAfter: true} })
		first, second := btcReq(), btcReq()
		first.Amount, second.Amount = dec("0.0103"), dec("0.01015")
		for _, req := range []exgate.WithdrawalRequest{first, second} {
			_, err := e.ex.Withdraw(ctx, e.cred, req)
			wantCode(t, err, exgate.CodeExchangeTimeout)
		}
		e.srv.SetFault(nil)
		for _, req := range []exgate.WithdrawalRequest{second, first} {
			got, err := e.ex.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "BTC", ClientWithdrawalID: req.ClientWithdrawalID})
			if err != nil {
				t.Fatalf("QueryWithdrawal(%s): %v", req.Amount, err)
			}
			if !got.Amount.Equal(req.Amount) {
				t.Errorf("the withdrawal of %s was matched to Kraken's withdrawal of %s", req.Amount, got.Amount)
			}
		}
	})
	t.Run("lost before processing: not found", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		watch(e.srv, "/0/private/Withdraw", func(int) krakenfake.Fault { return krakenfake.Fault{Drop: true} })
		req := btcReq()
		_, err := e.ex.Withdraw(t.Context(), e.cred, req)
		wantCode(t, err, exgate.CodeExchangeTimeout)
		e.srv.SetFault(nil)
		_, err = e.ex.QueryWithdrawal(t.Context(), e.cred, exgate.WithdrawalQuery{Asset: "BTC", ClientWithdrawalID: req.ClientWithdrawalID})
		if !errors.Is(err, exgate.ErrNotFound) {
			t.Errorf("QueryWithdrawal = %v, want ErrNotFound", err)
		}
	})
	t.Run("another instance cannot tell", func(t *testing.T) {
		shared := &testNonces{} // instances sharing a key share its nonces
		e := newEnv(t, krakenfake.Options{}, func(o *kraken.Options) { o.Nonces = shared })
		ctx := t.Context()
		other := kraken.New(kraken.Options{BaseURL: e.srv.URL, Now: fixedNow, Limiter: newTestLimiter(), Nonces: shared})
		req := btcReq()
		_, err := other.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "BTC", ClientWithdrawalID: req.ClientWithdrawalID})
		if !errors.Is(err, exgate.ErrNotFound) {
			t.Errorf("no recent withdrawal: %v, want ErrNotFound", err)
		}
		w, err := e.ex.Withdraw(ctx, e.cred, req)
		if err != nil {
			t.Fatal(err)
		}
		_, err = other.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "BTC", ClientWithdrawalID: req.ClientWithdrawalID})
		wantCode(t, err, exgate.CodeExchangeError, "exchangeId")
		if errors.Is(err, exgate.ErrNotFound) {
			t.Error("an unidentifiable withdrawal must not be reported as not found")
		}
		got, err := other.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "BTC", ClientWithdrawalID: req.ClientWithdrawalID, ExchangeID: w.ExchangeID})
		if err != nil || got.ExchangeID != w.ExchangeID {
			t.Errorf("by refid from another instance: %+v, %v", got, err)
		}
		_, err = other.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "BTC", ClientWithdrawalID: req.ClientWithdrawalID, ExchangeID: "FTnosuchrefid"})
		if !errors.Is(err, exgate.ErrNotFound) {
			t.Errorf("unknown refid: %v, want ErrNotFound", err)
		}
	})
}
