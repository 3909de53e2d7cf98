package storetest

import (
	"slices"
	"testing"

	"github.com/exgate/exgate"
)

// testPaperCredentials holds the store to paper keys (docs/contract.md
// 2.9): the paper mark and starting balances read back from every read
// of a credential, and PaperCredentialsResting lists exactly the paper
// keys of one exchange with an open order.
func (s suite) testPaperCredentials(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	if err := e.CreateClientKey(ctx, exgate.ClientKey{APIKey: "papa", Secret: "s"}); err != nil {
		t.Fatal(err)
	}
	bal, err := exgate.ParsePaperBalances("BTC=1,USDT=10000.5")
	if err != nil {
		t.Fatal(err)
	}
	add := func(name, exchange string, paper bool) exgate.Credential {
		t.Helper()
		c := exgate.Credential{ClientAPIKey: "papa", Name: name, Exchange: exchange, Paper: paper,
			Permissions: []exgate.Permission{exgate.PermissionTrade}}
		if paper {
			c.PaperBalances = bal
		} else if exchange != "sim" {
			c.Key, c.Secret = "k", "s"
		}
		got, err := e.AddCredential(ctx, c)
		if err != nil {
			t.Fatalf("add %s: %v", name, err)
		}
		return got
	}
	paperB := add("paper-b", "binance", true)
	paperB2 := add("paper-b2", "binance", true)
	paperG := add("paper-g", "gateio", true)
	live := add("live-b", "binance", false)
	simKey := add("sim", "sim", false)

	got, err := e.Credential(ctx, "papa", "paper-b")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Paper || exgate.FormatPaperBalances(got.PaperBalances) != "BTC=1,USDT=10000.5" {
		t.Errorf("paper credential read back as paper=%v balances=%q", got.Paper, exgate.FormatPaperBalances(got.PaperBalances))
	}
	if got, _ := e.Credential(ctx, "papa", "live-b"); got.Paper || got.PaperBalances != nil {
		t.Errorf("live credential read back as paper=%v balances=%v", got.Paper, got.PaperBalances)
	}
	list, err := e.ListCredentials(ctx, "papa")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if want := c.Name != "live-b" && c.Name != "sim"; c.Paper != want {
			t.Errorf("listed %s with paper=%v", c.Name, c.Paper)
		}
	}

	open := func(c exgate.Credential, id string) {
		t.Helper()
		if err := e.EnsureSimAccount(ctx, c.ID, bal); err != nil {
			t.Fatal(err)
		}
		op := exgate.SimOperation{ID: id, Kind: exgate.IntentOrder, Open: true, Changes: changes(t, "USDT", "-1")}
		if err := e.ApplySimOperation(ctx, c.ID, op); err != nil {
			t.Fatal(err)
		}
	}
	open(paperB, "o1")
	open(paperG, "o1")
	open(simKey, "o1")
	if err := e.EnsureSimAccount(ctx, paperB2.ID, bal); err != nil { // open account, no order
		t.Fatal(err)
	}
	_ = live
	resting, err := e.PaperCredentialsResting(ctx, "binance")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range resting {
		names = append(names, c.Name)
		if !c.Paper || c.Exchange != "binance" || c.ClientAPIKey != "papa" || c.Secret != "" || len(c.PaperBalances) != 2 {
			t.Errorf("resting credential %+v", c)
		}
	}
	if !slices.Equal(names, []string{"paper-b"}) {
		t.Errorf("PaperCredentialsResting(binance) = %v, want [paper-b]", names)
	}
	closeOp := exgate.SimOperation{ID: "o1.1", Kind: exgate.IntentCancel, Closes: "o1", Changes: changes(t, "USDT", "1")}
	if err := e.ApplySimOperation(ctx, paperB.ID, closeOp); err != nil {
		t.Fatal(err)
	}
	if resting, err := e.PaperCredentialsResting(ctx, "binance"); err != nil || len(resting) != 0 {
		t.Errorf("after the close PaperCredentialsResting(binance) = %v, %v", resting, err)
	}
}
