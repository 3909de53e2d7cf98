package binance

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/binance/binancefake"
)

func TestDepositStatusTable(t *testing.T) {
	want := map[int]exgate.TransferStatus{
		0: "pending", 1: "completed", 2: "failed", 6: "completed", 7: "failed", 8: "pending", 3: "pending", 99: "pending",
	}
	for raw, st := range want {
		body := fmt.Sprintf(`[{"id":"1","amount":"1","coin":"BTC","network":"BTC","status":%d,"insertTime":1}]`, raw)
		ds, err := parseDeposits([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if ds[0].Status != st || ds[0].RawStatus != fmt.Sprint(raw) {
			t.Errorf("deposit status %d -> %s (raw %q), want %s", raw, ds[0].Status, ds[0].RawStatus, st)
		}
	}
}

func TestWithdrawStatusTable(t *testing.T) {
	want := map[int]exgate.TransferStatus{
		0: "pending", 1: "canceled", 2: "pending", 3: "failed", 4: "pending", 5: "failed", 6: "completed", 7: "pending",
	}
	for raw, st := range want {
		body := fmt.Sprintf(`[{"id":"w","amount":"1","transactionFee":"0.1","coin":"BTC","status":%d,"applyTime":"2024-01-02 03:04:05"}]`, raw)
		ws, err := parseWithdrawals([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if ws[0].Status != st || ws[0].RawStatus != fmt.Sprint(raw) {
			t.Errorf("withdraw status %d -> %s (raw %q), want %s", raw, ws[0].Status, ws[0].RawStatus, st)
		}
	}
}

func TestWalletGolden(t *testing.T) {
	ds, err := parseDeposits(readTestdata(t, "deposit_history.json"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "deposit_history.golden.json", ds)
	ws, err := parseWithdrawals(readTestdata(t, "withdraw_history.json"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "withdraw_history.golden.json", ws)
	bs, err := parseBalances(readTestdata(t, "account.json"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "account.golden.json", bs)
	set, err := parseCoins(readTestdata(t, "capital_config_getall.json"))
	if err != nil {
		t.Fatal(err)
	}
	if nw := set.byCoin["BTC"]["ETH"]; nw == nil || !nw.WithdrawFee.Equal(num(t, "0.0000022")) || nw.WithdrawEnable {
		t.Errorf("BTC on ETH = %+v", nw)
	}
}

func TestDeposits(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	all, err := e.ex.RecentDeposits(ctx, e.cred, exgate.DepositFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6 {
		t.Fatalf("%d deposits, want the 6 seeded", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].Timestamp > all[i-1].Timestamp {
			t.Errorf("deposits not newest first at %d", i)
		}
	}
	pending, err := e.ex.RecentDeposits(ctx, e.cred, exgate.DepositFilter{Status: exgate.TransferPending})
	if err != nil {
		t.Fatal(err)
	}
	var raws []string
	for _, d := range pending {
		raws = append(raws, d.RawStatus)
	}
	if strings.Join(raws, ",") != "8,0" {
		t.Errorf("pending deposits have raw statuses %v, want 8 and 0", raws)
	}
	if p := e.fake.LastParams("GET", "/sapi/v1/capital/deposit/hisrec"); p.Get("status") != "" || p.Get("coin") != "" {
		t.Errorf("status filter sent to Binance: %v", p)
	}
	usdt, err := e.ex.RecentDeposits(ctx, e.cred, exgate.DepositFilter{Asset: "usdt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(usdt) != 2 || e.fake.LastParams("GET", "/sapi/v1/capital/deposit/hisrec").Get("coin") != "USDT" {
		t.Errorf("USDT deposits %+v", usdt)
	}
}

func TestDepositAddress(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	xrp, err := e.ex.DepositAddress(ctx, e.cred, exgate.DepositAddressRequest{Asset: "XRP", Network: "XRP"})
	if err != nil || xrp.Tag == nil || *xrp.Tag == "" || !strings.HasPrefix(xrp.Address, "r") {
		t.Errorf("XRP address %+v, %v; want one with a tag", xrp, err)
	}
	usdt, err := e.ex.DepositAddress(ctx, e.cred, exgate.DepositAddressRequest{Asset: "USDT", Network: "BEP20"})
	if err != nil || usdt.Tag != nil || usdt.Network != "BSC" || !strings.HasPrefix(usdt.Address, "0x") {
		t.Errorf("USDT BEP20 address %+v, %v", usdt, err)
	}
	if p := e.fake.LastParams("GET", "/sapi/v1/capital/deposit/address"); p.Get("coin") != "USDT" || p.Get("network") != "BSC" {
		t.Errorf("parameters %v", p)
	}
	_, err = e.ex.DepositAddress(ctx, e.cred, exgate.DepositAddressRequest{Asset: "USDT", Network: "SOL"})
	var xe *exgate.Error
	if !errors.As(err, &xe) || xe.Code != exgate.CodeInvalidParameter || xe.Param != "network" || !strings.Contains(xe.Detail, "BSC, ETH, TRX") {
		t.Errorf("unknown network: %v", err)
	}
	if n := e.fake.Requests("/sapi/v1/capital/config/getall"); n != 1 {
		t.Errorf("coin configuration read %d times, want once (cached)", n)
	}
}

const trxAddress = "TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9"

func TestWithdraw(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	req := exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: num(t, "25"), ClientWithdrawalID: "wd1"}
	w, err := e.ex.Withdraw(ctx, e.cred, req)
	if err != nil {
		t.Fatal(err)
	}
	p := e.fake.LastParams("POST", "/sapi/v1/capital/withdraw/apply")
	for k, v := range map[string]string{"coin": "USDT", "withdrawOrderId": "wd1", "network": "TRX", "address": trxAddress, "amount": "26"} {
		if p.Get(k) != v {
			t.Errorf("%s sent as %q, want %q (all %v)", k, p.Get(k), v, p)
		}
	}
	if p.Has("addressTag") {
		t.Errorf("addressTag sent without a tag")
	}
	if w.ID != "wd1" || w.ClientWithdrawalID != "wd1" || w.ExchangeID == "" || w.Status != exgate.TransferCompleted || w.RawStatus != "6" || w.TxID == "" {
		t.Errorf("withdrawal %+v", w)
	}
	if w.Amount.String() != "25" || w.Fees == nil || w.Fees.String() != "1" || w.TotalAmount.String() != "26" {
		t.Errorf("amount %s fees %v total %s, want 25 + 1 = 26", w.Amount, w.Fees, w.TotalAmount)
	}
	if free, _ := e.fake.Balance(testKey, "USDT"); !free.Equal(num(t, "249974")) {
		t.Errorf("USDT left %s, want 250000 - 26", free)
	}
	if p := e.fake.LastParams("GET", "/sapi/v1/capital/withdraw/history"); p.Get("withdrawOrderId") != "wd1" || p.Get("coin") != "USDT" {
		t.Errorf("read back with %v", p)
	}
	q, err := e.ex.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "USDT", ClientWithdrawalID: "wd1"})
	if err != nil || q.ID != "wd1" || !q.TotalAmount.Equal(w.TotalAmount.Decimal) {
		t.Errorf("QueryWithdrawal = %+v, %v", q, err)
	}
	byID, err := e.ex.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{ExchangeID: w.ExchangeID})
	if err != nil || byID.ExchangeID != w.ExchangeID {
		t.Errorf("QueryWithdrawal by exchange id = %+v, %v", byID, err)
	}
	_, err = e.ex.QueryWithdrawal(ctx, e.cred, exgate.WithdrawalQuery{Asset: "USDT", ClientWithdrawalID: "nosuch"})
	if !errors.Is(err, exgate.ErrNotFound) {
		t.Errorf("unknown withdrawal: %v, want ErrNotFound", err)
	}
}

func TestWithdrawPending(t *testing.T) {
	e := newEnv(t)
	e.fake.AddAccount(binancefake.Account{APIKey: "slow", Secret: "slow", PendingWithdrawals: true, Balances: map[string]string{"XRP": "100"}})
	cred := exgate.Credential{ID: 9, Key: "slow", Secret: "slow"}
	req := exgate.WithdrawalRequest{Asset: "XRP", Network: "XRP", Address: "rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY", Tag: "12345", Amount: num(t, "10"), ClientWithdrawalID: "wd2"}
	w, err := e.ex.Withdraw(t.Context(), cred, req)
	if err != nil {
		t.Fatal(err)
	}
	if w.Status != exgate.TransferPending || w.RawStatus != "4" || w.Tag != "12345" || w.TotalAmount.String() != "10.2" {
		t.Errorf("withdrawal %+v", w)
	}
	e.fake.SetWithdrawalStatus("slow", "wd2", 6)
	q, err := e.ex.QueryWithdrawal(t.Context(), cred, exgate.WithdrawalQuery{Asset: "XRP", ClientWithdrawalID: "wd2"})
	if err != nil || q.Status != exgate.TransferCompleted || q.TxID == "" {
		t.Errorf("after completion: %+v, %v", q, err)
	}
}

// TestWithdrawRefusedLocally: the network's rules are applied before
// anything is sent.
func TestWithdrawRefusedLocally(t *testing.T) {
	tests := []struct {
		name      string
		req       exgate.WithdrawalRequest
		wantCode  exgate.Code
		wantParam string
	}{
		{"unknown network", exgate.WithdrawalRequest{Asset: "USDT", Network: "SOL", Address: trxAddress, Amount: num(t, "25")}, exgate.CodeInvalidParameter, "network"},
		{"unknown asset", exgate.WithdrawalRequest{Asset: "NOPE", Network: "TRX", Address: trxAddress, Amount: num(t, "25")}, exgate.CodeInvalidParameter, "asset"},
		{"bad address", exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: "0x0000000000000000000000000000000000000000", Amount: num(t, "25")}, exgate.CodeInvalidParameter, "address"},
		{"tag on a network without tags", exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Tag: "1", Amount: num(t, "25")}, exgate.CodeInvalidParameter, "tag"},
		{"bad tag", exgate.WithdrawalRequest{Asset: "XRP", Network: "XRP", Address: "rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY", Tag: "abc", Amount: num(t, "10")}, exgate.CodeInvalidParameter, "tag"},
		{"not a multiple", exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: num(t, "25.0000001")}, exgate.CodeInvalidParameter, "amount"},
		{"under the minimum", exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: num(t, "5")}, exgate.CodeWithdrawalRejected, ""},
		{"over the maximum", exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: num(t, "20000000")}, exgate.CodeWithdrawalRejected, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tc.req.ClientWithdrawalID = "refused1"
			_, err := e.ex.Withdraw(t.Context(), e.cred, tc.req)
			var xe *exgate.Error
			if !errors.As(err, &xe) || xe.Code != tc.wantCode || xe.Param != tc.wantParam {
				t.Errorf("Withdraw: %v, want %s (param %q)", err, tc.wantCode, tc.wantParam)
			}
			if n := e.fake.Requests("/sapi/v1/capital/withdraw/apply"); n != 0 {
				t.Errorf("%d withdraw requests, want none", n)
			}
		})
	}
}

func TestWithdrawRefusedByBinance(t *testing.T) {
	e := newEnv(t)
	e.fake.AddAccount(binancefake.Account{APIKey: "poor", Secret: "poor", Balances: map[string]string{"USDT": "20"}})
	cred := exgate.Credential{ID: 10, Key: "poor", Secret: "poor"}
	req := exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: trxAddress, Amount: num(t, "25"), ClientWithdrawalID: "poor1"}
	_, err := e.ex.Withdraw(t.Context(), cred, req)
	if code(err) != exgate.CodeInsufficientFunds {
		t.Errorf("Withdraw over the balance: %v, want INSUFFICIENT_FUNDS", err)
	}
}
